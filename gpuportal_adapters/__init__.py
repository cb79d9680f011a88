"""What does I/O for the hub, the portal and the session alike: the async Slurm client and its
commands, the job poller and the shared cluster snapshot, the LDAP check, the audit writer,
process helpers, the hub-service runner, the settings read from the environment, and TLS to
the hub. The pure rules they carry out live in gpuportal_core, which imports nothing of this."""
