"""LemonLDAP::NG's configuration for the local cluster's identity provider (deploy/local/sso.sh).

Prints lmConf-1.json: the portal at https://sso.example.org/; users and groups from the
cluster's LDAP (LDAPS, its CA checked); a TOTP second factor required of everyone; and one
OpenID Connect client, the hub (authorization code flow, PKCE required, a client secret, RS256
ID tokens), which gets the user's `uid` as `preferred_username` and their LDAP groups as
`groups`.

A site's own LemonLDAP::NG is set up in its manager with the same keys; docs/how-to/sso.md
lists them. Every value here is one a site would choose, none is a test shortcut.

    sso_config.py --portal https://sso.example.org/ --domain example.org
                  --ldap ldaps://ldap:6360/ --ldap-ca FILE
                  --client-id ID --client-secret-file FILE --redirect-uri URL [...]
                  --signing-key FILE --state DIR
    sso_config.py --modules     the Perl modules that configuration loads, one a line (install.sh
                                and sso.sh load each once, to say a missing one before the start)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BASE = "dc=example,dc=org"
GROUPS = "ou=groups,dc=example,dc=org"
PORTAL = "Lemonldap::NG::Portal::"


@dataclass(frozen=True)
class Keys:
    """The configuration's secrets, read from their files (left empty for --modules)."""

    private_key: str = ""
    public_key: str = ""
    client_secret: str = ""


def read_keys(args: argparse.Namespace) -> Keys:
    return Keys(
        private_key=Path(args.signing_key).read_text(),
        public_key=Path(args.signing_key + ".pub").read_text(),
        client_secret=Path(args.client_secret_file).read_text().strip(),
    )


def perl_modules(config: Mapping[str, object]) -> list[str]:
    """The modules LemonLDAP::NG loads by name for this configuration, and the FastCGI server's.

    The portal loads each at its start; one that fails (a Perl module missing beneath it) stops
    the whole portal, which then answers every page with an error.
    """
    auth = str(config["authentication"])
    user_db = auth if config["userDB"] == "Same" else str(config["userDB"])
    modules = [
        f"{PORTAL}Main",
        f"{PORTAL}Auth::{auth}",
        f"{PORTAL}UserDB::{user_db}",
        f"{PORTAL}Password::{config['passwordDB']}",
    ]
    # Loaded by every portal, whatever else is on: the second-factor engine and the captcha
    # (GD::SecurityImage drawn with Image::Magick), "::" standing for the portal's namespace.
    for key, default in (
        ("sfEngine", "::2F::Engines::Default"),
        ("captcha", "::Captcha::SecurityImage"),
    ):
        name = str(config.get(key) or default)
        modules.append(f"{PORTAL}{name[2:]}" if name.startswith("::") else name)
    if config.get("oncetotp2fActivation"):
        # Ours (deploy/local/sso_plugins, on the provider's PERL5LIB), TOTP's with it.
        modules += [f"{PORTAL}2F::TOTP", f"{PORTAL}2F::OnceTOTP"]
    if config.get("totp2fSelfRegistration"):
        modules.append(f"{PORTAL}2F::Register::TOTP")
    if config.get("issuerDBOpenIDConnectActivation"):
        modules.append(f"{PORTAL}Issuer::OpenIDConnect")
    if config.get("bruteForceProtection"):
        modules.append(f"{PORTAL}Plugins::BruteForceProtection")
    if config.get("loginHistoryEnabled"):
        modules.append(f"{PORTAL}Plugins::History")
    modules += [str(config[key]) for key in ("globalStorage", "persistentStorage")]
    modules.append(str(config["localSessionStorage"]))
    # llng-fastcgi-server: Plack's FastCGI handler with a process manager.
    modules += ["Plack::Handler::FCGI", "FCGI::ProcManager"]
    return list(dict.fromkeys(modules))


def configuration(args: argparse.Namespace, keys: Keys) -> dict[str, object]:
    state = Path(args.state)
    private_key = keys.private_key
    public_key = keys.public_key
    secret = keys.client_secret
    client = args.client_id
    return {
        "cfgNum": 1,
        "cfgAuthor": "deploy/local/sso.sh",
        "cfgDate": str(int(time.time())),
        "cfgVersion": "2.16.1",
        "portal": args.portal,
        "domain": args.domain,
        "cookieName": "llngsso",
        # HTTPS only, never read by the page's scripts.
        "securedCookie": 1,
        "httpOnly": 1,
        "timeout": 8 * 3600,
        "portalSkin": "bootstrap",
        "portalDisplayRegister": 0,
        "portalDisplayResetPassword": 0,
        "portalCheckLogins": 0,
        "loginHistoryEnabled": 1,
        # Who a user is and their password: the cluster's LDAP, as the hub reads it.
        "authentication": "LDAP",
        "userDB": "Same",
        "passwordDB": "Null",
        "registerDB": "Null",
        "ldapServer": args.ldap,
        "ldapCAFile": args.ldap_ca,
        "ldapVerify": "require",
        # The whole directory, as a site's provider knows everyone of the site (the demo's
        # `guest` too, who has no POSIX account: the hub refuses them, not the provider).
        "ldapBase": BASE,
        "managerDn": "",
        "managerPassword": "",
        "AuthLDAPFilter": "(&(uid=$user)(objectClass=inetOrgPerson))",
        "LDAPFilter": "(&(uid=$user)(objectClass=inetOrgPerson))",
        "ldapTimeout": 4,
        "ldapIOTimeout": 4,
        "ldapExportedVars": {"uid": "uid", "cn": "cn", "mail": "mail"},
        "ldapGroupBase": GROUPS,
        "ldapGroupObjectClass": "posixGroup",
        "ldapGroupAttributeName": "memberUid",
        "ldapGroupAttributeNameUser": "uid",
        "ldapGroupAttributeNameSearch": "cn",
        "exportedVars": {"UA": "HTTP_USER_AGENT"},
        "whatToTrace": "uid",
        # The second factor: TOTP, required of every user; a user without one registers it at
        # their first sign-in (the demo's users are registered by sso.sh). Checked by OnceTOTP
        # (sso_plugins/), LemonLDAP::NG's TOTP that accepts a code once, in its place.
        "available2F": "OnceTOTP",
        # The engine loads a listed module by its name's key (2.16 also takes its rule from
        # there); 2.21 takes the rule from the module's prefix, TOTP's: without that key it asks
        # no code at all (the Debian 13 demo's smoke, 2026-11-29).
        "oncetotp2fActivation": 'has2f("TOTP")',
        "totp2fActivation": 'has2f("TOTP")',
        "onceTotpDir": str(state / "totp-used"),
        "totp2fSelfRegistration": 1,
        "totp2fUserCanRemoveKey": 0,
        "totp2fIssuer": args.issuer_name,
        "totp2fDigits": 6,
        "totp2fInterval": 30,
        "totp2fRange": 1,
        "sfRequired": 1,
        # Repeated failures slow a user down at the provider itself.
        "bruteForceProtection": 1,
        # OpenID Connect provider.
        "issuerDBOpenIDConnectActivation": 1,
        "issuerDBOpenIDConnectPath": "^/oauth2/",
        "oidcServiceMetaDataIssuer": args.portal.rstrip("/"),
        "oidcServicePrivateKeySig": private_key,
        "oidcServicePublicKeySig": public_key,
        "oidcServiceKeyIdSig": "gpuportal-demo-1",
        "oidcServiceAllowAuthorizationCodeFlow": 1,
        "oidcServiceAllowImplicitFlow": 0,
        "oidcServiceAllowHybridFlow": 0,
        "oidcServiceAllowDynamicRegistration": 0,
        "oidcServiceIgnoreScopeForClaims": 1,
        "oidcRPMetaDataOptions": {
            client: {
                "oidcRPMetaDataOptionsDisplayName": "GPU portal",
                "oidcRPMetaDataOptionsClientID": client,
                "oidcRPMetaDataOptionsClientSecret": secret,
                "oidcRPMetaDataOptionsPublic": 0,
                "oidcRPMetaDataOptionsRequirePKCE": 1,
                "oidcRPMetaDataOptionsRedirectUris": " ".join(args.redirect_uri),
                "oidcRPMetaDataOptionsPostLogoutRedirectUris": " ".join(args.logout_uri),
                "oidcRPMetaDataOptionsIDTokenSignAlg": "RS256",
                "oidcRPMetaDataOptionsIDTokenExpiration": 3600,
                "oidcRPMetaDataOptionsAccessTokenExpiration": 600,
                "oidcRPMetaDataOptionsBypassConsent": 1,
                "oidcRPMetaDataOptionsLogoutBypassConfirm": 1,
                "oidcRPMetaDataOptionsLogoutSessionRequired": 0,
                "oidcRPMetaDataOptionsRefreshToken": 0,
            }
        },
        "oidcRPMetaDataExportedVars": {
            client: {
                "preferred_username": "uid",
                "name": "cn",
                "email": "mail",
                "groups": "groups;string;always",
            }
        },
        "oidcRPMetaDataOptionsExtraClaims": {client: {"groups": "groups"}},
        # Sessions and each user's registered second factors: files of the provider's account.
        "globalStorage": "Apache::Session::File",
        "globalStorageOptions": {
            "Directory": str(state / "sessions"),
            "LockDirectory": str(state / "sessions/lock"),
        },
        "persistentStorage": "Apache::Session::File",
        "persistentStorageOptions": {
            "Directory": str(state / "psessions"),
            "LockDirectory": str(state / "psessions/lock"),
        },
        "localSessionStorage": "Cache::FileCache",
        "localSessionStorageOptions": {
            "cache_root": str(state / "cache"),
            "cache_depth": 3,
            "default_expires_in": 600,
            # A number (0o077): the string "077" would be read as decimal 77.
            "directory_umask": 0o077,
            "namespace": "lemonldap-ng-sessions",
        },
        "notification": 0,
        "locationRules": {},
        "exportedHeaders": {},
        # A group of the provider's own besides LDAP's (every user here has passed a second
        # factor): a hub that takes the groups claim sees it, one that reads LDAP does not.
        "groups": {"mfa": "1"},
        "macros": {},
        "applicationList": {},
    }


def main() -> None:
    modules = "--modules" in sys.argv[1:]
    # With --modules nothing is read or written: every other option keeps a stand-in value.
    needed = not modules
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="print the Perl modules it loads")
    parser.add_argument("--portal", required=needed, default="https://sso.example.org/")
    parser.add_argument("--domain", required=needed, help="its cookies' domain, e.g. example.org")
    parser.add_argument("--ldap", required=needed)
    parser.add_argument("--ldap-ca", required=needed)
    parser.add_argument("--client-id", required=needed, default="client")
    parser.add_argument("--client-secret-file", required=needed)
    parser.add_argument("--redirect-uri", action="append", required=needed, default=[])
    parser.add_argument("--logout-uri", action="append", default=[])
    parser.add_argument("--signing-key", required=needed, help="PEM; its public key in FILE.pub")
    parser.add_argument("--issuer-name", default="GPU portal")
    parser.add_argument("--state", required=needed, default="/nonexistent")
    args = parser.parse_args()
    if modules:
        print("\n".join(perl_modules(configuration(args, Keys()))))
        return
    print(json.dumps(configuration(args, read_keys(args)), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
