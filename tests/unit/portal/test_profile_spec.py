"""One profile spec (issue 37): the API's schemas, the stored form and the admin form all come
from gpuportal_core.profiles.ProfileSpec, so a field added there shows everywhere."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from gpuportal_core.profiles import ProfileSpec, spec_values
from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from tests.unit.portal.conftest import ADMIN_TOKEN

SPEC = set(ProfileSpec.model_fields)


def test_every_field_of_the_spec_is_in_each_api_schema(
    client: tuple[TestClient, HubIdentity],
) -> None:
    schemas = client[0].get("/services/portal/openapi.json").json()["components"]["schemas"]
    fields = {name: set(schema["properties"]) for name, schema in schemas.items()}
    assert fields["ProfileCreate"] == SPEC | {"slug"}
    assert fields["ProfileUpdate"] == SPEC | {"version"}
    assert fields.get("ProfilePublic", fields.get("ProfilePublic-Output")) == SPEC | {
        "slug", "position", "version", "updated_at", "updated_by",
    }  # fmt: skip
    # The spec's words are the API's: the runtime fields say they are HH:MM:SS.
    idle = schemas["ProfileCreate"]["properties"]["idle_limit"]
    assert idle["title"] == "Stop a session unused for"
    assert {"type": "string", "description": "HH:MM:SS", "examples": ["08:00:00"]} in idle["anyOf"]


def test_every_field_of_the_spec_is_on_the_admin_form_with_its_default(
    client: tuple[TestClient, HubIdentity],
) -> None:
    admin = client[0]
    admin.cookies.set(COOKIE_NAME, ADMIN_TOKEN)
    page = admin.get("/services/portal/admin/profiles/new")
    assert page.status_code == 200, page.text
    named = set(
        re.findall(r'name="([a-z_]+?)(?:_(?:account|qos|reservation|constraint))?"', page.text)
    )
    assert named >= SPEC, SPEC - named
    for name, field in ProfileSpec.model_fields.items():
        if name in ("sbatch_options", "groups", "enabled", "title", "description"):
            continue
        default = spec_values(ProfileSpec(title="-", gpus=1))[name]
        shown = re.search(rf'id="{name}" name="{name}" value="([^"]*)"', page.text)
        assert shown and shown.group(1) == str(default), (name, shown)
        assert (field.title or "") in page.text
    # The culling limits sit together under their legend.
    assert re.search(r"<legend[^>]*>Culling <span class=\"field-hint\">HH:MM:SS each", page.text)


def test_the_environment_schemas_come_from_one_spec_too(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """Issue 56, item 5: an environment's Create, Update and Public derive from EnvironmentSpec,
    so a field added there is in each, and in an update optional."""
    from gpuportal_portal.schemas import EnvironmentSpec

    spec = set(EnvironmentSpec.model_fields)
    schemas = client[0].get("/services/portal/openapi.json").json()["components"]["schemas"]
    fields = {name: set(schema["properties"]) for name, schema in schemas.items()}
    assert fields["EnvironmentCreate"] == spec | {"slug"}
    assert fields["EnvironmentUpdate"] == spec | {"version"}
    assert schemas["EnvironmentUpdate"].get("required") == ["version"]
    assert schemas["EnvironmentUpdate"]["additionalProperties"] is False
    public = fields.get("EnvironmentPublic", fields.get("EnvironmentPublic-Output"))
    assert public == spec | {"slug", "position", "version", "updated_at", "updated_by"}
