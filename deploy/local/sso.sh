#!/usr/bin/env bash
# The local cluster's identity provider: LemonLDAP::NG 2.16 (Debian's packages) on a host of its
# own, `sso` (deploy/local/hosts.sh), at https://sso.example.org/ with a certificate of the demo CA. Users
# sign in with their cluster (LDAP) password and a TOTP code; the hub signs users in through it
# with OpenID Connect (authorization code with PKCE). Its FastCGI server and nginx run as the
# account gpuportal-sso, never as root (port 443 is opened to accounts in that host's network
# namespace only). deploy/local/sso_config.py writes its configuration; docs/how-to/sso.md says
# why LemonLDAP::NG and how a site connects its own provider.
#
#   sso.sh start          make what is missing (account, keys, certificate, configuration), start
#                         it, and register a TOTP key for each demo user who has none
#                         (a provider left up that does not answer is stopped and started again)
#   sso.sh stop | status
#   sso.sh check          load every Perl module the configuration needs; say which is missing
#   sso.sh code USER      USER's TOTP code now (from the key registered for them by start)
#   sso.sh secret USER    USER's TOTP key as an otpauth:// URI, for an authenticator app
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${PORTAL_STATE:-/var/lib/portal-local}
VENV=${VENV:-/opt/gpuportal/venv}
SERVICE_USER=${PORTAL_SERVICE_USER:-gpuportal}
DIR=$STATE/sso                 # the provider's own: configuration, sessions, keys, logs
CLIENT_DIR=$STATE/sso-client   # the hub's: its client secret (the service account's alone)
TOTP_DIR=$STATE/sso-totp       # the demo users' TOTP keys, as their phones would hold them
# The provider's log, which the hub reads for refused second factors (its audit stream), as a
# site ships its provider's log to the hub host: the hub's account may read it, not write it.
LOG_DIR=$STATE/sso-log
ACCOUNT=gpuportal-sso
URL=https://sso.example.org/
CLIENT_ID=gpuportal-hub
CA=$STATE/demo-ca/ca.pem
# Where the hub may send users back to: the demo's hub, the tests' single sign-on hubs, and the
# hub the Ansible role installs on the roots that stand in for a site's login host (tests/site).
HUB_URLS=${PORTAL_SSO_HUB_URLS:-https://127.0.0.1:8000 https://127.0.0.1:8250 https://127.0.0.1:8350 https://127.0.0.1:8450 https://10.213.0.21:8000 https://10.213.0.21}

say() { printf '[sso] %s\n' "$*"; }
die() { printf '[sso] error: %s\n' "$*" >&2; exit 1; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1" 2>/dev/null)" 2>/dev/null; }
as_account() { bash "$HERE/hosts.sh" on sso setpriv --reuid="$ACCOUNT" --regid="$ACCOUNT" --init-groups "$@"; }

prepare() {
    command -v llng-fastcgi-server >/dev/null || die "LemonLDAP::NG is not installed (install.sh)"
    id -u "$ACCOUNT" >/dev/null 2>&1 ||
        useradd --system --user-group --home-dir "$DIR" --no-create-home --shell /usr/sbin/nologin "$ACCOUNT"
    install -d -m 0700 -o "$ACCOUNT" -g "$ACCOUNT" "$DIR"
    for sub in conf sessions sessions/lock psessions psessions/lock cache log run tmp totp-used; do
        install -d -m 0700 -o "$ACCOUNT" -g "$ACCOUNT" "$DIR/$sub"
    done
    install -d -m 0700 -o "$SERVICE_USER" -g "$SERVICE_USER" "$CLIENT_DIR"
    install -d -m 0750 -o "$ACCOUNT" -g "$SERVICE_USER" "$LOG_DIR"
    install -d -m 0700 "$TOTP_DIR"
    # The key that signs ID tokens, and the hub's client secret: made once.
    if [ ! -s "$DIR/conf/oidc-signing.pem" ]; then
        (umask 077
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$DIR/conf/oidc-signing.pem" 2>/dev/null
        openssl pkey -in "$DIR/conf/oidc-signing.pem" -pubout -out "$DIR/conf/oidc-signing.pem.pub")
    fi
    if [ ! -s "$CLIENT_DIR/client-secret" ]; then
        (umask 077; head -c 32 /dev/urandom | base64 | tr -d '=+/\n' >"$CLIENT_DIR/client-secret")
    fi
    chown "$SERVICE_USER:$SERVICE_USER" "$CLIENT_DIR/client-secret"
    chmod 0400 "$CLIENT_DIR/client-secret"
    bash "$HERE/https.sh" issue sso "$DIR/tls" "$ACCOUNT" "DNS:sso.example.org,DNS:sso,IP:$(bash "$HERE/hosts.sh" addr sso)" >/dev/null

    local redirects=() url
    for url in $HUB_URLS; do
        redirects+=(--redirect-uri "$url/hub/oauth_callback" --logout-uri "$url/hub/signed-out")
    done
    (umask 077
    "$VENV/bin/python" "$HERE/sso_config.py" --portal "$URL" --domain example.org --ldap "${PORTAL_LDAP_URI:-ldaps://ldap:6360/}" \
        --ldap-ca "$STATE/ldap-ca.pem" --client-id "$CLIENT_ID" --client-secret-file "$CLIENT_DIR/client-secret" \
        --signing-key "$DIR/conf/oidc-signing.pem" --state "$DIR" --issuer-name "GPU portal demo" \
        "${redirects[@]}" >"$DIR/conf/lmConf-1.json.new")
    mv "$DIR/conf/lmConf-1.json.new" "$DIR/conf/lmConf-1.json"
    # No configuration cache: a configuration written again is read at the next start.
    cat >"$DIR/lemonldap-ng.ini" <<EOF
[all]
logLevel = notice
logger = Lemonldap::NG::Common::Logger::Std
userLogger = Lemonldap::NG::Common::Logger::Std
[configuration]
type = File
dirName = $DIR/conf
[portal]
staticPrefix = /static
templateDir = $DIR/templates
languages = en
; PE_BADOTP, for a wrong code and for one already used (sso_plugins/.../OnceTOTP.pm).
error_96 = That code is wrong or was already used: each code works once. Wait for the next code in your app and enter it.
[handler]
status = 0
EOF
    sed "s|@DIR@|$DIR|g" "$HERE/sso-nginx.conf.in" >"$DIR/nginx.conf"
    # The portal's pages, less the two scripts its header loads from a CDN for Internet
    # Explorer 8 (in a conditional comment no browser of today reads): nothing from elsewhere.
    rm -rf "$DIR/templates"
    cp -r /usr/share/lemonldap-ng/portal/templates "$DIR/templates"
    sed -i '/<!--\[if lt IE 9\]>/,/<!\[endif\]-->/d' "$DIR/templates/bootstrap/header.tpl"
    # Our second factor module (a TOTP code works once), on the FastCGI server's PERL5LIB.
    rm -rf "$DIR/perl"
    cp -r "$HERE/sso_plugins" "$DIR/perl"
    # A refused code's page offers "Try again" back into the same sign-in (sso_skin/).
    rm -rf "$DIR/gpportal"
    install -d -m 0755 "$DIR/gpportal"
    install -m 0644 "$HERE/sso_skin/sign-in-again.js" "$DIR/gpportal/"
    printf '    <script type="text/javascript" src="/gpportal/sign-in-again.js"></script>\n' \
        >>"$DIR/templates/bootstrap/customhead.tpl"
    touch "$DIR/log/nginx-error.log" "$LOG_DIR/portal.log"
    chown -R "$ACCOUNT:$ACCOUNT" "$DIR"
    chown "$ACCOUNT:$SERVICE_USER" "$LOG_DIR/portal.log"
    chmod 0640 "$LOG_DIR/portal.log"
    # Port 443 for any account, on the `sso` host only (its own network namespace).
    ip netns exec gpp-sso sysctl -qw net.ipv4.ip_unprivileged_port_start=443
}

answers() {  # the provider's discovery document, within 5 s
    curl -fsS --max-time 5 --cacert "$CA" "${URL}.well-known/openid-configuration" >/dev/null 2>&1
}

check() {
    command -v llng-fastcgi-server >/dev/null || die "LemonLDAP::NG is not installed (install.sh)"
    local modules failed
    mapfile -t modules < <(python3 "$HERE/sso_config.py" --modules)
    # One Perl for all of them; a failure's first line, with the file Perl could not find.
    failed=$(PERL5LIB="$HERE/sso_plugins${PERL5LIB:+:$PERL5LIB}" perl -e 'for my $m (@ARGV) { eval "require $m; 1" and next;
        my ($first) = split /\n/, $@; print "$m\t$first\n" }' "${modules[@]}")
    [ -z "$failed" ] && return
    local module why file
    while IFS=$'\t' read -r module why; do
        file=$(grep -oE "Can't locate [^ ]+\.pm" <<<"$why" | cut -d' ' -f3 || true)
        if [ -n "$file" ]; then
            # Debian names a module's package after it: IO/Socket/Timeout.pm, libio-socket-timeout-perl.
            printf '[sso] %s does not load: %s is missing (Debian package: probably lib%s-perl;' \
                "$module" "$file" "$(tr '/A-Z' '-a-z' <<<"${file%.pm}")" >&2
            printf ' apt-file search %s names it)\n' "$file" >&2
        else
            printf '[sso] %s does not load: %s\n' "$module" "$why" >&2
        fi
    done <<<"$failed"
    die "LemonLDAP::NG cannot start without these; install them (apt-get install) and run this again"
}

start() {
    bash "$HERE/hosts.sh" up >/dev/null
    check
    prepare
    # Left up by an earlier start that failed (a module missing then, say): it keeps its failed
    # start until it is started again.
    if { alive "$DIR/run/llng.pid" || alive "$DIR/run/nginx.pid"; } && ! answers; then
        say "a provider is up but does not answer its discovery document: stopping it and starting it again"
        stop >/dev/null
    fi
    # The FastCGI server reads its configuration and modules once: one left up by an older
    # checkout runs the configuration this one wrote only once started again.
    local fingerprint
    fingerprint=$(config_fingerprint)
    if alive "$DIR/run/llng.pid" && [ "$(cat "$DIR/run/config.sha" 2>/dev/null)" != "$fingerprint" ]; then
        say "its configuration changed: starting the provider again"
        stop >/dev/null
    fi
    if ! alive "$DIR/run/llng.pid"; then
        as_account env LLNG_DEFAULTCONFFILE="$DIR/lemonldap-ng.ini" \
            LLNG_DEFAULTLOGGER=Lemonldap::NG::Common::Logger::Std \
            PERL5LIB="$DIR/perl" setsid llng-fastcgi-server --foreground --proc 2 --socket "$DIR/run/llng.sock" \
            --pid "$DIR/run/llng.pid" >>"$LOG_DIR/portal.log" 2>&1 </dev/null &
    fi
    printf '%s\n' "$fingerprint" >"$DIR/run/config.sha"
    for _ in $(seq 100); do [ -S "$DIR/run/llng.sock" ] && break; sleep 0.1; done
    [ -S "$DIR/run/llng.sock" ] || die "the FastCGI server did not start ($LOG_DIR/portal.log)"
    # A running nginx reads the configuration prepare wrote again (a newer checkout's).
    if alive "$DIR/run/nginx.pid"; then
        as_account nginx -c "$DIR/nginx.conf" -p "$DIR" -s reload 2>>"$DIR/log/nginx-error.log"
    else
        as_account nginx -c "$DIR/nginx.conf" -p "$DIR" 2>>"$DIR/log/nginx-error.log"
    fi
    for _ in $(seq 100); do answers && break; sleep 0.2; done
    if ! answers; then
        grep -F '[error]' "$LOG_DIR/portal.log" 2>/dev/null | tail -3 | sed 's/^/[sso] its log: /' >&2
        die "$URL does not answer ($LOG_DIR/portal.log, $DIR/log)"
    fi
    say "LemonLDAP::NG at $URL (host sso), users from LDAP, TOTP required, OIDC client $CLIENT_ID"
    register_demo_users
}

config_fingerprint() {  # what the FastCGI server reads at its start, less the date written
    {
        python3 -c 'import json, sys
conf = json.load(open(sys.argv[1]))
conf.pop("cfgDate", None)
print(json.dumps(conf, sort_keys=True))' "$DIR/conf/lmConf-1.json"
        cat "$DIR/lemonldap-ng.ini"
        find "$DIR/perl" -type f -print0 | sort -z | xargs -0 cat
    } | sha256sum | cut -d' ' -f1
}

register_demo_users() {
    local login password users=()
    while IFS=$'\t' read -r login _ password _; do
        [[ -z "$login" || "$login" == \#* ]] && continue
        [ -s "$TOTP_DIR/$login" ] || users+=("$login:$password")
    done <"$HERE/users.tsv"
    # The directory's guest, who is no cluster user (deploy/local/cluster.sh).
    [ -s "$TOTP_DIR/guest" ] || users+=("guest:guest-demo")
    [ ${#users[@]} -eq 0 ] && return
    "$VENV/bin/python" "$HERE/sso_register.py" --portal "$URL" --ca "$CA" --keys "$TOTP_DIR" "${users[@]}"
}

stop() {
    local pidfile
    for pidfile in "$DIR/run/nginx.pid" "$DIR/run/llng.pid"; do
        if alive "$pidfile"; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
            for _ in $(seq 50); do alive "$pidfile" || break; sleep 0.1; done
        fi
    done
    # The FastCGI server's workers end with their manager; none may stay. Only this machine's:
    # a Debian root beside it (deploy/local/debian_root.sh) may run a provider of its own as an
    # account of the same uid.
    pkill --ns $$ --nslist pid -u "$ACCOUNT" 2>/dev/null || true
    rm -f "$DIR/run/"*.pid "$DIR/run/llng.sock"
    say "stopped"
}

status() {
    if alive "$DIR/run/nginx.pid" && alive "$DIR/run/llng.pid"; then
        say "running at $URL"
    else
        say "not running"
        return 1
    fi
}

code() {
    [ -s "$TOTP_DIR/${1:?user}" ] || die "no TOTP key registered for $1 (sso.sh start)"
    "$VENV/bin/python" -c 'import sys, pyotp; print(pyotp.TOTP(open(sys.argv[1]).read().strip()).now())' "$TOTP_DIR/$1"
}

secret() {
    [ -s "$TOTP_DIR/${1:?user}" ] || die "no TOTP key registered for $1 (sso.sh start)"
    "$VENV/bin/python" -c 'import sys, pyotp
print(pyotp.TOTP(open(sys.argv[1]).read().strip()).provisioning_uri(sys.argv[2], issuer_name="GPU portal demo"))' \
        "$TOTP_DIR/$1" "$1"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    check) check ;;
    status) status ;;
    code) code "${2:-}" ;;
    secret) secret "${2:-}" ;;
    *) die "usage: $0 start|stop|status|check|code USER|secret USER" ;;
esac
