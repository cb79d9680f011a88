# The two commands of the README, and their helpers. Run as root on Debian 12 or 13.
VENV ?= /opt/gpuportal/venv
PYTEST_ARGS ?=
CODE = gpuportal_core gpuportal_adapters spawner portal gpuportal_session gpuportal_cli tests bench deploy docs
# portal/ and spawner/ install as gpuportal_portal and gpuportal_spawner (pyproject.toml); mypy
# cannot follow setuptools' editable finder, so it reads them through links of those names.
IMPORT_NAMES = build/import-names

.PHONY: demo stop test check docs lint typecheck ansible-lint status

demo:
	@bash deploy/local/install.sh
	@VENV=$(VENV) bash deploy/local/docs.sh
	@bash deploy/local/cluster.sh start
	@bash deploy/local/https.sh make
	@bash deploy/local/sso.sh start
	@PORTAL_LOGIN=$${PORTAL_LOGIN:-sso} bash deploy/local/hub.sh start
	@bash deploy/local/prometheus.sh start https://127.0.0.1:$${PORTAL_HUB_PORT:-8000} \
		$${PORTAL_HUB_STATE:-/var/lib/portal-local/hub}/prometheus-api-token
	@echo
	@echo "Preflight (gpuportal-admin preflight, as an admin runs it on the hub host):"
	@PORTAL_LOGIN=$${PORTAL_LOGIN:-sso} bash deploy/local/hub.sh preflight
	@echo
	@echo "GPU portal is up: https://127.0.0.1:$${PORTAL_HUB_PORT:-8000}  (http://127.0.0.1:$$(( $${PORTAL_HUB_PORT:-8000} + 80 )) redirects there)"
	@echo "  its certificate is the demo CA's: trust $${PORTAL_STATE:-/var/lib/portal-local}/demo-ca/ca.pem in your browser"
	@if [ "$${PORTAL_LOGIN:-sso}" = sso ]; then \
		echo "Sign-in: single sign-on at https://sso.example.org/ (LemonLDAP::NG, host sso): the password below, then a"; \
		echo "  TOTP code: bash deploy/local/sso.sh code alice prints alice's code now (sso.sh secret alice: her key"; \
		echo "  for an authenticator app). The password form instead: PORTAL_LOGIN=ldap make demo"; \
	else echo "Sign-in: the hub's LDAP password form (single sign-on instead: make demo)"; fi
	@echo "  alice / alice-demo   data scientist (group ds)"
	@echo "  bob   / bob-demo     data scientist (group ds)"
	@echo "  carol / carol-demo   cluster admin (group hpc-admins), hub admin"
	@echo "  dave  / dave-demo    data scientist of another team (group vision)"
	@echo "Profiles admin page (carol): https://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/admin"
	@echo "REST API docs: https://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/docs"
	@echo "The docs (Docs in the navigation): https://127.0.0.1:$${PORTAL_HUB_PORT:-8000}/services/portal/manual/"
	@echo "Prometheus (the hub, the portal, the nodes): http://127.0.0.1:9490"
	@echo "Stop everything with: make stop"

stop:
	@bash deploy/local/prometheus.sh stop
	@bash deploy/local/hub.sh stop
	@bash deploy/local/sso.sh stop
	@bash deploy/local/cluster.sh stop
	@bash deploy/local/postgres.sh stop

status:
	@bash deploy/local/cluster.sh status
	@bash deploy/local/hub.sh status
	@bash deploy/local/prometheus.sh status

test:
	@VENV=$(VENV) CODE="$(CODE)" bash tests/make_test.sh $(PYTEST_ARGS)

# The quick loop beside `make test` (under a minute on 2 cores): lint, types and the unit tests
# that neither build (the docs, a wheel) nor start processes (marked `builds`: make test runs
# them). Installs first where nothing is installed yet.
check:
	@[ -x $(VENV)/bin/pytest ] && [ -x $(ANSIBLE_VENV)/bin/ansible-lint ] || bash deploy/local/install.sh --test
	@$(VENV)/bin/ruff check $(CODE) && $(VENV)/bin/ruff format --check $(CODE)
	@$(MAKE) --no-print-directory typecheck
	@$(MAKE) --no-print-directory ansible-lint
	@$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m "not builds" -o addopts="--durations=5" \
		tests/unit $(PYTEST_ARGS)

# The docs site (docs/) into docs/_build/html, which the portal serves at
# /services/portal/manual/ (deploy/local/docs.sh: warnings are errors, every link lands).
docs:
	@bash deploy/local/install.sh
	@VENV=$(VENV) bash deploy/local/docs.sh

# The Ansible collection (deploy/ansible), with its own tools (install.sh --test installs them).
ANSIBLE_VENV ?= /opt/gpuportal/ansible
ansible-lint:
	@cd deploy/ansible && PATH=$(ANSIBLE_VENV)/bin:$$PATH $(ANSIBLE_VENV)/bin/ansible-lint -q

typecheck:
	@mkdir -p $(IMPORT_NAMES)
	@ln -sfn ../../portal $(IMPORT_NAMES)/gpuportal_portal
	@ln -sfn ../../spawner $(IMPORT_NAMES)/gpuportal_spawner
	@$(VENV)/bin/mypy

lint:
	@$(VENV)/bin/ruff format $(CODE)
	@$(VENV)/bin/ruff check --fix $(CODE)
