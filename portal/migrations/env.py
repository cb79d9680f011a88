"""Alembic's entry: the URL comes from the caller's config (gpuportal_portal.db.alembic_config) or,
for the `alembic` command line with portal/alembic.ini, from PORTAL_DATABASE_URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from gpuportal_portal.models import Base
from gpuportal_portal.settings import PortalSettings

config = context.config
if not config.get_main_option("sqlalchemy.url"):
    url = PortalSettings().database_url
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))


def run_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=Base.metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as connection:
        # Batch mode: SQLite can only change a table by copying it.
        context.configure(
            connection=connection, target_metadata=Base.metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
