"""What a user is offered on the spawn page: the resource profiles (live from the portal, or
the hub's config), the software environments that go with them, and the cluster's capacity.

A part of GpuProfilesSpawner (its traits are set as `c.GpuProfilesSpawner.*`), apart from the
spawn itself: the spawn page, the home page's cards and the capacity endpoint read it.
"""

from __future__ import annotations

from typing import Any, cast

from traitlets import Dict, Integer, List, Type, Unicode
from traitlets.config import Configurable, LoggingConfigurable

from gpuportal_adapters.cluster_snapshot import Snapshot
from gpuportal_core.accounting import group_use
from gpuportal_core.profiles import (
    DEFAULT_CORES_PER_GPU,
    DEFAULT_MEM_PER_GPU_GB,
    ProfileError,
    ResourceProfile,
    default_profile_config,
    load_profiles,
    visible_profiles,
)
from gpuportal_spawner import capacity
from gpuportal_spawner.capacity import capacity_view
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.profile_source import Offer, ProfileSource
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner


class ProfileOffer(LoggingConfigurable):
    """The profiles, environments and capacity one user is offered."""

    user: Any  # the spawner's user (JupyterHub's Spawner trait)

    resource_profiles = List(
        Dict(),
        default_value=default_profile_config(),
        config=True,
        help="Profiles offered, e.g. [{'slug': 'gpu-2', 'title': '2 GPUs', 'gpus': 2, "
        "'max_runtime': '24:00:00'}]. Cores and memory follow the GPU count.",
    )
    cores_per_gpu = Integer(DEFAULT_CORES_PER_GPU, config=True, help="CPU cores per GPU, e.g. 8.")
    mem_per_gpu_gb = Integer(
        DEFAULT_MEM_PER_GPU_GB, config=True, help="Memory in GB per GPU, e.g. 48."
    )
    partition = Unicode("gpu", config=True, help="Default Slurm partition, e.g. gpu.")
    max_gpus_per_node = Integer(4, config=True, help="GPUs on one node of the partition, e.g. 4.")
    profile_spawner_class = Type(
        GpuSlurmSpawner,
        klass=GpuSlurmSpawner,
        config=True,
        help="Spawner class each profile runs with: GpuSlurmSpawner or a subclass of it, e.g. "
        "gpuportal_spawner.slurm_spawner.GpuSlurmSpawner.",
    )
    portal_url = Unicode(
        "",
        config=True,
        help="The portal service, where admins edit profiles live, e.g. "
        "http://127.0.0.1:8082/services/portal. Empty: use resource_profiles only.",
    )
    portal_token = Unicode(
        "", config=True, help="The API token the hub gave the portal service (reads all profiles)."
    )
    profiles_cache = Unicode(
        "",
        config=True,
        help="File keeping the portal's last answer, so that spawns and resumes right after a "
        "hub restart do not wait for the portal, e.g. /var/lib/jupyterhub/profiles-cache.json.",
    )

    async def offer(self) -> Offer:
        """The profiles this user may see and spawn, and the environments that go with them,
        live from the portal when there is one."""
        if self.portal_url:
            sources = hub_state(self.user).profile_sources
            source = sources.get(self.portal_url)
            if source is None:
                source = ProfileSource(
                    url=self.portal_url,
                    token=self.portal_token,
                    fallback=self.configured_profiles,
                    cache_file=self.profiles_cache,
                )
                sources[self.portal_url] = source
            offer = await source.offer()
        else:
            offer = Offer(self.configured_profiles(), [])
        profiles = visible_profiles(offer.profiles, [group.name for group in self.user.groups])
        slugs = {profile.slug for profile in profiles}
        environments = [
            env for env in offer.environments if not env.profiles or env.profiles & slugs
        ]
        return Offer(profiles, environments)

    async def capacity(self, profiles: list[ResourceProfile] | None = None) -> dict[str, Any]:
        """Free GPUs, and whether each of this user's profiles starts now
        (gpuportal_spawner.capacity).

        profiles: the offer's, when the caller already has them (the form does).
        """
        if profiles is None:
            profiles = (await self.offer()).profiles
        taken = await self.cluster_snapshot()
        assocs = await capacity.group_limits(
            hub_state(self.user),
            bin_dir=self.session_setting("slurm_bin_dir"),
            timeout=self.session_setting("slurm_timeout"),
        )
        group = group_use(assocs, self.user.name, taken.jobs) if taken is not None else None
        return capacity_view(profiles, taken, group)

    async def cluster_snapshot(self) -> Snapshot | None:
        """The cluster's jobs, nodes and reservations as of a few seconds ago, shared by all
        users' pages (None: Slurm did not answer within 2 s)."""
        snapshot = capacity.snapshot(
            hub_state(self.user),
            bin_dir=self.session_setting("slurm_bin_dir"),
            timeout=self.session_setting("slurm_timeout"),
            ttl=self.session_setting("capacity_ttl"),
        )
        return await snapshot.get_within(2.0)

    def session_setting(self, name: str) -> Any:
        """A setting of the session spawner's (its Slurm settings: this wrapper has no Slurm of
        its own), as that spawner gets it: its class's and its bases' config sections, the
        most derived winning, checked by its trait, else the trait's default."""
        spawner_class = cast(type[Configurable], self.profile_spawner_class)
        # Any: each concrete trait (Float, Unicode) has validate(); the base type's stub has not.
        trait: Any = spawner_class.class_traits()[name]
        value = trait.default()
        for section in spawner_class.section_names():
            if name in self.config.get(section, {}):
                value = trait.validate(None, self.config[section][name])
        return value

    def configured_profiles(self) -> list[ResourceProfile]:
        try:
            return load_profiles(
                self.resource_profiles,
                cores_per_gpu=self.cores_per_gpu,
                mem_per_gpu_gb=self.mem_per_gpu_gb,
                partition=self.partition,
                max_gpus_per_node=self.max_gpus_per_node,
            )
        except ProfileError as error:
            self.log.error("Resource profiles are misconfigured: %s", error)
            raise spawn_error(
                "The resource profiles are misconfigured; please tell the cluster admins.",
                reason="profiles_config",
                status_code=500,
            ) from None
