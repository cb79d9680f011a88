#!/usr/bin/env bash
# The demo's HTTPS, as a site has its own: a CA of the demo's and the hub's certificate signed
# by it, for the names a browser or a node uses (localhost, 127.0.0.1, hub and its address,
# hub.example.org and *.hub.example.org).
# A site puts its own certificate in PORTAL_PUBLIC_TLS_CERT / _KEY instead (docs/explanation/security.md).
#
#   https.sh make    the CA (STATE/demo-ca/ca.pem, public; its key root's alone) and the hub's
#                    key and certificate (STATE/hub-tls, the service account's alone); made
#                    again when the certificate has under 30 days left. Safe to run again.
#   https.sh issue NAME DIR OWNER SANS   another host's key and certificate (DIR/NAME.key, .crt)
#   (make also adds the CA to this machine's store, /etc/ssl/certs, as a site does its own)
#   https.sh trust   add the CA to root's certificate store for Chromium (NSS), which the
#                    browser tests use, as a site's users' browsers trust the site's CA
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${PORTAL_STATE:-/var/lib/portal-local}
SERVICE_USER=${PORTAL_SERVICE_USER:-gpuportal}
CA_DIR=$STATE/demo-ca
TLS_DIR=$STATE/hub-tls
DAYS=397  # what browsers accept of a certificate, and a renewal a year

say() { printf '[https] %s\n' "$*"; }

make_ca() {
    [ -s "$CA_DIR/ca.pem" ] && [ -s "$CA_DIR/ca.key" ] && return
    install -d -m 0755 "$CA_DIR"
    (umask 077; openssl req -x509 -newkey rsa:3072 -nodes -days 3650 \
        -subj "/CN=GPU portal demo CA" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -keyout "$CA_DIR/ca.key" -out "$CA_DIR/ca.pem" 2>/dev/null)
    chmod 0644 "$CA_DIR/ca.pem"
    say "demo CA: $CA_DIR/ca.pem"
}

# covers CERT SANS: CERT names every one of SANS (a comma-separated subjectAltName list).
covers() {
    local have wanted names
    have=$(openssl x509 -noout -ext subjectAltName -in "$1" 2>/dev/null | tr -d ' ' | tr ',' '\n')
    # Read into an array, not split by the shell: *.hub.example.org must not be globbed.
    IFS=, read -ra names <<<"${2//IP:/IPAddress:}"
    for wanted in "${names[@]}"; do
        grep -qxF "$wanted" <<<"$have" || return 1
    done
}

# issue NAME DIR OWNER SANS: DIR/NAME.key (OWNER's alone) and DIR/NAME.crt for SANS, signed by
# the demo CA; kept while it has 30 days left, still chains to the CA and names every one of
# SANS (a machine set up before a name was added gets a new one).
issue() {
    local name=$1 dir=$2 owner=$3 names=$4 cert=$2/$1.crt
    if [ -s "$cert" ] && openssl x509 -checkend $((30 * 86400)) -noout -in "$cert" >/dev/null &&
        openssl verify -CAfile "$CA_DIR/ca.pem" "$cert" >/dev/null 2>&1 && covers "$cert" "$names"; then
        return
    fi
    install -d -m 0700 -o "$owner" -g "$owner" "$dir"
    (umask 077
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$dir/$name.key" \
        -out "$dir/$name.csr" 2>/dev/null
    openssl x509 -req -in "$dir/$name.csr" -CA "$CA_DIR/ca.pem" -CAkey "$CA_DIR/ca.key" \
        -CAcreateserial -days "$DAYS" -out "$cert" \
        -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$names") 2>/dev/null)
    rm -f "$dir/$name.csr"
    chown "$owner:$owner" "$dir/$name.key" "$cert"
    chmod 0600 "$dir/$name.key"
    chmod 0644 "$cert"
    say "$name certificate for $names, $DAYS days: $cert"
}

# The hub's site name and every user's subdomain of it too (JupyterHub's subdomain_host, a
# wildcard as a site's CA issues one: issue 68), besides the names a node or a script uses. Not
# a setting yet: nothing else reads the name until the hub serves users' subdomains.
PUBLIC_NAME=hub.example.org
make_cert() {
    issue hub "$TLS_DIR" "$SERVICE_USER" \
        "DNS:localhost,IP:127.0.0.1,DNS:hub,IP:$(bash "$HERE/hosts.sh" addr hub),DNS:$(hostname),DNS:$PUBLIC_NAME,DNS:*.$PUBLIC_NAME"
}

# What the tests' and benches' own clients trust (requests, httpx, websockets): the system's
# CAs and the demo's, in one public file.
make_bundle() {
    cat /etc/ssl/certs/ca-certificates.crt "$CA_DIR/ca.pem" >"$CA_DIR/bundle.pem.tmp"
    chmod 0644 "$CA_DIR/bundle.pem.tmp"
    mv "$CA_DIR/bundle.pem.tmp" "$CA_DIR/bundle.pem"
}

# The machine's own store (/etc/ssl/certs), as a site puts its CA on its hosts: the `gpuportal`
# command line on the login host and in sessions (the nodes share this root) trusts it there.
system_trust() {
    local target=/usr/local/share/ca-certificates/gpuportal-demo-ca.crt
    cmp -s "$CA_DIR/ca.pem" "$target" && return
    install -m 0644 "$CA_DIR/ca.pem" "$target"
    update-ca-certificates >/dev/null 2>&1 || { say "update-ca-certificates failed"; exit 1; }
    say "this machine's certificate store trusts $CA_DIR/ca.pem"
}

trust() {
    local db=sql:$HOME/.pki/nssdb
    command -v certutil >/dev/null || { say "certutil missing (libnss3-tools)"; exit 1; }
    install -d -m 0700 "$HOME/.pki/nssdb"
    [ -f "$HOME/.pki/nssdb/cert9.db" ] || certutil -d "$db" -N --empty-password
    certutil -d "$db" -D -n "GPU portal demo CA" >/dev/null 2>&1 || true
    certutil -d "$db" -A -t "C,," -n "GPU portal demo CA" -i "$CA_DIR/ca.pem"
    say "Chromium of $(id -un) trusts $CA_DIR/ca.pem"
}

case "${1:-}" in
    make) make_ca; make_cert; system_trust; make_bundle ;;
    # A certificate of another host's, signed by the demo CA (the identity provider's: sso.sh).
    issue) shift; make_ca; make_bundle; issue "$@" ;;
    trust) trust ;;
    *) echo "usage: $0 make|issue NAME DIR OWNER SANS|trust" >&2; exit 2 ;;
esac
