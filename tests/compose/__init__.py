"""docker-compose.yml with podman: see test_compose_up.py."""
