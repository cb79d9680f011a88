import pytest

from gpuportal_core.profiles import default_profile_config, load_profiles
from gpuportal_core.request import InvalidRequest, options_from_form_data, parse_user_options

PROFILES = load_profiles(default_profile_config())


def test_profile_and_runtime_are_taken():
    request = parse_user_options({"profile": "gpu-2", "runtime": "02:30:00"}, PROFILES)
    assert request.profile.slug == "gpu-2"
    assert request.runtime == 2 * 3600 + 30 * 60
    assert request.as_user_options() == {"profile": "gpu-2", "runtime": "02:30:00"}


def test_runtime_defaults_to_the_profile_default():
    assert parse_user_options({"profile": "gpu-4"}, PROFILES).runtime == 8 * 3600
    assert parse_user_options({"profile": "gpu-4", "runtime": ""}, PROFILES).runtime == 8 * 3600


def test_no_options_means_the_first_profile():
    assert parse_user_options({}, PROFILES).profile.slug == "gpu-1"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"profile": "gpu-8"}, "unknown profile 'gpu-8'; choose one of: gpu-1, gpu-2, gpu-4"),
        ({"profile": "gpu-1", "runtime": "25:00:00"}, "over the maximum of 24:00:00"),
        ({"profile": "gpu-1", "runtime": "8 hours"}, "form HH:MM:SS"),
        ({"profile": "gpu-1", "runtime": "08:00:00\n#SBATCH --uid=0"}, "form HH:MM:SS"),
        ({"profile": "gpu-1", "runtime": "00:00:30"}, "at least 00:01:00"),
        ({"profile": "gpu-1\n#SBATCH --gres=gpu:8"}, "unknown profile 'given'"),
        ({"profile": "gpu-1", "partition": "debug"}, "unknown option(s) partition; allowed"),
        ({"profile": "gpu-1", "gpus": 8}, "unknown option(s) gpus"),
        ({"profile": ["gpu-1"]}, "profile must be a string"),
        ({"profile": "gpu-1", "runtime": 3600}, "runtime must be a string"),
    ],
)
def test_bad_options_say_what_is_allowed(options, message):
    with pytest.raises(InvalidRequest) as error:
        parse_user_options(options, PROFILES)
    assert message in str(error.value)


def test_form_fields_become_options_without_the_xsrf_field():
    form = {"profile": ["gpu-2"], "runtime": [" 01:00:00 "], "_xsrf": ["abc"]}
    assert options_from_form_data(form) == {"profile": "gpu-2", "runtime": "01:00:00"}


def test_repeated_form_field_is_refused():
    with pytest.raises(InvalidRequest, match="exactly once"):
        options_from_form_data({"profile": ["gpu-1", "gpu-4"]})
