"""Profiles: built-in simulator and sandbox, environment variables, TOML profiles, precedence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.vector_files import VECTORS
from toolkit import demo
from toolkit.config import (
    SANDBOX_POLL,
    SIMULATOR_POLL,
    ConfigError,
    GatewayConfig,
    PollSchedule,
    load_config,
    simulator_config,
)
from toolkit.keys import KeyProblem, generate_rsa_key, load_private_key, load_public_key, write_key_files
from toolkit.masking import Secret

SANDBOX_ENV = {
    "GATEWAY_BASE_URL": "https://sandbox.gateway.example/paynet/",
    "GATEWAY_ENDPOINT_ID": "51494",
    "GATEWAY_LOGIN": "merchant-login",
    "GATEWAY_CONTROL_KEY": "B17F59B4-A7DC-41B4-8FF9-37D986B43D20",
}


@pytest.fixture
def no_profiles(tmp_path: Path) -> Path:
    """A profile file without profiles, so that a gatekit.toml lying around changes nothing."""
    path = tmp_path / "empty.toml"
    path.write_text("")
    return path


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gatekit.toml"
    path.write_text(text)
    return path


def public_numbers(key_pem: bytes):
    return load_public_key(key_pem).public_numbers()


def test_default_profile_is_the_simulator_demo_merchant(clean_env):
    config = load_config(env={})
    assert (config.profile, config.base_url, config.login) == ("simulator", demo.BASE_URL, demo.LOGIN)
    assert (config.endpoint_id, config.endpoint_group_id) == (demo.ENDPOINT_ID, demo.ENDPOINT_GROUP_ID)
    assert config.control_key.reveal() == demo.CONTROL_KEY
    assert config.poll == SIMULATOR_POLL
    assert config.private_key.public_key().public_numbers() == public_numbers(demo.public_key_pem())


def test_gatekit_profile_chooses_the_profile(no_profiles):
    config = load_config(env={**SANDBOX_ENV, "GATEKIT_PROFILE": "sandbox"}, file=no_profiles)
    assert config.profile == "sandbox"
    assert config.base_url == "https://sandbox.gateway.example/paynet"  # trailing slash dropped
    assert (config.endpoint_id, config.login) == ("51494", "merchant-login")
    assert config.control_key == Secret("B17F59B4-A7DC-41B4-8FF9-37D986B43D20")
    assert config.poll == SANDBOX_POLL


def test_sandbox_names_every_missing_setting_and_its_variable(no_profiles):
    with pytest.raises(ConfigError) as missing:
        load_config("sandbox", env={"GATEWAY_ENDPOINT_ID": "1"}, file=no_profiles)
    assert str(missing.value) == (
        "profile sandbox: missing base_url (GATEWAY_BASE_URL), login (GATEWAY_LOGIN), control_key (GATEWAY_CONTROL_KEY)"
    )


def test_an_endpoint_or_group_id_is_required(no_profiles):
    env = {k: v for k, v in SANDBOX_ENV.items() if k != "GATEWAY_ENDPOINT_ID"}
    with pytest.raises(ConfigError, match="GATEWAY_ENDPOINT_ID or GATEWAY_ENDPOINT_GROUP_ID"):
        load_config("sandbox", env=env, file=no_profiles)
    grouped = load_config("sandbox", env={**env, "GATEWAY_ENDPOINT_GROUP_ID": "7"}, file=no_profiles)
    assert (grouped.endpoint_id, grouped.endpoint_group_id) == (None, "7")


def test_sandbox_without_a_key_file_says_which_variable_to_set(no_profiles):
    config = load_config("sandbox", env=SANDBOX_ENV, file=no_profiles)
    with pytest.raises(ConfigError, match="v4 operations need a private key \\(GATEWAY_PRIVATE_KEY_FILE\\)"):
        _ = config.private_key


def test_environment_overrides_the_simulator_profile_and_its_demo_key(no_profiles):
    key_file = VECTORS / "rsa-test-private-pkcs8.pem"
    env = {"GATEWAY_BASE_URL": "http://127.0.0.1:9999/paynet", "GATEWAY_PRIVATE_KEY_FILE": str(key_file)}
    config = load_config("simulator", env=env, file=no_profiles)
    assert config.base_url == "http://127.0.0.1:9999/paynet"
    assert config.login == demo.LOGIN
    expected = load_private_key(key_file).public_key().public_numbers()
    assert config.private_key.public_key().public_numbers() == expected


def test_precedence_overrides_then_environment_then_file_then_built_in(tmp_path):
    path = write_toml(
        tmp_path,
        '[profiles.acme]\nbase_url = "https://file.example"\nendpoint_id = 1\nlogin = "file-login"\n'
        'control_key = "file-key"\n',
    )
    env = {"GATEWAY_BASE_URL": "https://env.example", "GATEWAY_LOGIN": "env-login"}
    config = load_config("acme", env=env, file=path, base_url="https://flag.example", endpoint_id=None)
    assert config.base_url == "https://flag.example"  # override > environment
    assert config.login == "env-login"  # environment > file
    assert config.control_key.reveal() == "file-key"  # file > built-in
    assert config.endpoint_id == "1"  # a None override changes nothing; numbers become strings
    assert config.poll == SANDBOX_POLL  # built-in


def test_toml_profile_reads_its_control_key_from_its_own_variable(tmp_path):
    path = write_toml(
        tmp_path,
        '[profiles.acme-sandbox]\nbase = "sandbox"\nbase_url = "https://sandbox.gateway.example/paynet"\n'
        'endpoint_id = "51494"\nlogin = "acme"\ncontrol_key_env = "ACME_CONTROL_KEY"\n'
        'callback_url = "https://hooks.acme.example/gateway"\npoll = { intervals = [3, 3, 5], deadline = 600 }\n',
    )
    config = load_config("acme-sandbox", env={"ACME_CONTROL_KEY": "acme-secret"}, file=path)
    assert config.control_key.reveal() == "acme-secret"
    assert config.callback_url == "https://hooks.acme.example/gateway"
    assert config.poll == PollSchedule((3.0, 3.0, 5.0), 600.0)
    with pytest.raises(ConfigError, match="missing control_key \\(GATEWAY_CONTROL_KEY or ACME_CONTROL_KEY\\)"):
        load_config("acme-sandbox", env={}, file=path)
    generic = load_config("acme-sandbox", env={"GATEWAY_CONTROL_KEY": "from-env"}, file=path)
    assert generic.control_key.reveal() == "from-env"


def test_generic_variable_beats_the_profile_variable(tmp_path):
    path = write_toml(
        tmp_path, '[profiles.p]\nbase_url = "https://x"\nendpoint_id = 1\nlogin = "l"\ncontrol_key_env = "P_KEY"\n'
    )
    config = load_config("p", env={"P_KEY": "profile", "GATEWAY_CONTROL_KEY": "generic"}, file=path)
    assert config.control_key.reveal() == "generic"


def test_toml_profile_based_on_the_simulator_keeps_the_demo_merchant(tmp_path):
    path = write_toml(
        tmp_path,
        '[profiles.fast-sim]\nbase = "simulator"\nbase_url = "http://127.0.0.1:8181/paynet"\n'
        "poll = { intervals = [0.01], deadline = 2 }\n",
    )
    config = load_config("fast-sim", env={}, file=path)
    assert (config.profile, config.base_url, config.login) == ("fast-sim", "http://127.0.0.1:8181/paynet", demo.LOGIN)
    assert config.poll == PollSchedule((0.01,), 2.0)
    assert config.private_key.key_size == 2048


def test_relative_key_file_is_relative_to_the_toml_file(tmp_path, clean_env):
    folder = tmp_path / "conf"
    key = generate_rsa_key(2048)
    write_key_files(key, folder / "keys", passphrase=b"pass phrase")
    path = write_toml(folder, '[profiles.k]\nbase = "simulator"\nprivate_key_file = "keys/private-pkcs8.pem"\n')
    config = load_config("k", env={"GATEWAY_PRIVATE_KEY_PASSPHRASE": "pass phrase"}, file=path)
    assert config.private_key_file == folder / "keys" / "private-pkcs8.pem"
    assert config.private_key.private_numbers() == key.private_numbers()
    wrong = load_config("k", env={"GATEWAY_PRIVATE_KEY_PASSPHRASE": "wrong"}, file=path)
    with pytest.raises(KeyProblem, match="passphrase is wrong"):
        _ = wrong.private_key


def test_profile_file_comes_from_gatekit_config_or_the_working_directory(clean_env):
    text = '[profiles.here]\nbase = "simulator"\nbase_url = "http://here.example"\n'
    write_toml(clean_env, text)
    assert load_config("here").base_url == "http://here.example"
    other = clean_env / "other.toml"
    other.write_text(text.replace("here.example", "there.example"))
    assert load_config("here", env={"GATEKIT_CONFIG": str(other)}).base_url == "http://there.example"


@pytest.mark.parametrize(
    ("text", "profile", "message"),
    [
        ('[profiles.p]\nbase = "simulator"\nbase_urll = "x"\n', "p", "profile p: unknown settings base_urll"),
        ('[profiles.p]\nbase = "production"\n', "p", "profile p: unknown base 'production'; known profiles: "),
        ('[profiles.p]\nbase = "simulator"\n', "q", "unknown profile 'q'; known profiles: simulator, sandbox, p"),
        ('[profiles.p\nbase = "simulator"\n', "p", "gatekit.toml: "),
        ('[profiles.p]\nbase = "simulator"\npoll = { intervals = [] , deadline = 5 }\n', "p", "poll"),
        ('[profiles.p]\nbase = "simulator"\npoll = { deadline = 5 }\n', "p", "profile p: poll must be"),
    ],
    ids=["misspelt setting", "unknown base", "unknown profile", "broken TOML", "empty poll", "poll without intervals"],
)
def test_bad_profiles_give_clear_errors(tmp_path, text, profile, message):
    path = write_toml(tmp_path, text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(profile, env={}, file=path)


def test_a_missing_profile_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.toml: .*No such file"):
        load_config("p", env={"GATEKIT_CONFIG": str(tmp_path / "missing.toml")})


def test_repr_never_shows_the_control_key_or_the_passphrase(no_profiles):
    config = load_config(
        "sandbox",
        env={**SANDBOX_ENV, "GATEWAY_PRIVATE_KEY_PASSPHRASE": "my pass phrase"},
        file=no_profiles,
    )
    shown = repr(config) + str(config)
    assert "B17F59B4" not in shown and "my pass phrase" not in shown
    assert "Secret('<redacted>')" in shown
    assert "BEGIN" not in repr(simulator_config())  # the demo key stays out of the repr too


def test_with_overrides_wraps_secrets_and_ignores_none():
    config = simulator_config().with_overrides(control_key="new", endpoint_id=7, login=None)
    assert isinstance(config.control_key, Secret) and config.control_key.reveal() == "new"
    assert (config.endpoint_id, config.login) == ("7", demo.LOGIN)
    assert isinstance(config, GatewayConfig)


def test_poll_schedule_repeats_its_last_delay():
    delays = PollSchedule((0.1, 0.2), 5.0).delays()
    assert [next(delays) for _ in range(4)] == [0.1, 0.2, 0.2, 0.2]
    with pytest.raises(ConfigError, match="positive deadline"):
        PollSchedule((1.0,), 0)
