# The two commands of the README, and their helpers. Run as root on Debian 12.
VENV ?= /opt/gpuportal/venv
PYTEST_ARGS ?=
CODE = gpuportal_core spawner portal gpuportal_session gpuportal_cli tests bench deploy
# portal/ and spawner/ install as gpuportal_portal and gpuportal_spawner (pyproject.toml); mypy
# cannot follow setuptools' editable finder, so it reads them through links of those names.
IMPORT_NAMES = build/import-names

.PHONY: demo stop test lint typecheck status

demo:
	@bash deploy/local/install.sh
	@bash deploy/local/cluster.sh start
	@bash deploy/local/hub.sh start
	@bash deploy/local/prometheus.sh start http://127.0.0.1:$${PORTAL_HUB_PORT:-8000} \
		$${PORTAL_HUB_STATE:-/var/lib/portal-local/hub}/prometheus-api-token
	@echo
	@echo "GPU portal is up: http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}"
	@echo "  alice / alice-demo   data scientist (group ds)"
	@echo "  bob   / bob-demo     data scientist (group ds)"
	@echo "  carol / carol-demo   cluster admin (group hpc-admins), hub admin"
	@echo "  dave  / dave-demo    data scientist of another team (group vision)"
	@echo "Profiles admin page (carol): http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/admin"
	@echo "REST API docs: http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/docs"
	@echo "Prometheus (the hub, the portal, the nodes): http://127.0.0.1:9490"
	@echo "Stop everything with: make stop"

stop:
	@bash deploy/local/prometheus.sh stop
	@bash deploy/local/hub.sh stop
	@bash deploy/local/cluster.sh stop
	@bash deploy/local/postgres.sh stop

status:
	@bash deploy/local/cluster.sh status
	@bash deploy/local/hub.sh status
	@bash deploy/local/prometheus.sh status

test:
	@bash deploy/local/install.sh --test
	@bash deploy/local/cluster.sh start
	@bash deploy/local/postgres.sh start
	@$(VENV)/bin/ruff check $(CODE)
	@$(VENV)/bin/ruff format --check $(CODE)
	@$(MAKE) --no-print-directory typecheck
	@bash tests/lanes.sh $(VENV)/bin/python $(PYTEST_ARGS)

typecheck:
	@mkdir -p $(IMPORT_NAMES)
	@ln -sfn ../../portal $(IMPORT_NAMES)/gpuportal_portal
	@ln -sfn ../../spawner $(IMPORT_NAMES)/gpuportal_spawner
	@$(VENV)/bin/mypy

lint:
	@$(VENV)/bin/ruff format $(CODE)
	@$(VENV)/bin/ruff check --fix $(CODE)
