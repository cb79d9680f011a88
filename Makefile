# The two commands of the README, and their helpers. Run as root on Debian 12.
VENV ?= /opt/gpuportal/venv
PYTEST_ARGS ?=

.PHONY: demo stop test lint status

demo:
	@bash deploy/local/install.sh
	@bash deploy/local/cluster.sh start
	@bash deploy/local/hub.sh start
	@echo
	@echo "GPU portal is up: http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}"
	@echo "  alice / alice-demo   data scientist (group ds)"
	@echo "  bob   / bob-demo     data scientist (group ds)"
	@echo "  carol / carol-demo   cluster admin (group hpc-admins), hub admin"
	@echo "  dave  / dave-demo    data scientist of another team (group vision)"
	@echo "Profiles admin page (carol): http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/admin"
	@echo "REST API docs: http://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/docs"
	@echo "Stop everything with: make stop"

stop:
	@bash deploy/local/hub.sh stop
	@bash deploy/local/cluster.sh stop
	@bash deploy/local/postgres.sh stop

status:
	@bash deploy/local/cluster.sh status
	@bash deploy/local/hub.sh status

test:
	@bash deploy/local/install.sh --test
	@bash deploy/local/cluster.sh start
	@bash deploy/local/postgres.sh start
	@$(VENV)/bin/ruff check core spawner portal gpuportal_session gpuportal_cli tests bench deploy
	@$(VENV)/bin/ruff format --check core spawner portal gpuportal_session gpuportal_cli tests bench deploy
	@$(VENV)/bin/mypy
	@$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

lint:
	@$(VENV)/bin/ruff format core spawner portal gpuportal_session gpuportal_cli tests bench deploy
	@$(VENV)/bin/ruff check --fix core spawner portal gpuportal_session gpuportal_cli tests bench deploy
