"""config.yaml parsing: defaults, clear errors that name the key, the API key kept out."""

from __future__ import annotations

import pytest

from hermes_side.embedding.settings import (
    DEFAULT_OPENAI_BASE_URL,
    EmbeddingSettings,
    SettingsError,
    load_settings,
    resolve_api_key,
)
from hermes_side.search.semantic import semantic_search

from .helpers import write_config


def test_defaults_without_config(home):
    settings = load_settings(home)
    assert settings == EmbeddingSettings()
    assert settings.provider == "local" and settings.enabled and not settings.remote
    assert settings.endpoint is None


def test_openai_defaults_model_and_endpoint(home):
    write_config(home, {"provider": "openai"})
    settings = load_settings(home)
    assert settings.model == "text-embedding-3-small"
    assert settings.endpoint == DEFAULT_OPENAI_BASE_URL


def test_other_plugin_keys_are_left_alone(home):
    write_config(home, "plugins:\n  project-history-recall:\n    api: {port: 1}\n    embedding:\n      top_k: 7\n")
    assert load_settings(home).top_k == 7


@pytest.mark.parametrize(
    ("embedding", "needle"),
    [
        ({"chunk_sise": 128}, "unknown key 'chunk_sise' (did you mean 'chunk_size'?)"),
        ({"provider": "voyage"}, "provider must be one of local, openai"),
        ({"chunk_size": "big"}, "chunk_size must be an integer"),
        ({"chunk_size": True}, "chunk_size must be an integer"),
        ({"enabled": "yes"}, "enabled must be true or false"),
        ({"top_k": 0}, "top_k must be between"),
        ({"chunk_size": 64, "chunk_overlap": 40}, "chunk_overlap must be at most half"),
        ({"model": "bge-m3"}, "provider local offers"),
        ({"base_url": "http://x/v1"}, "base_url applies to provider openai only"),
        ({"provider": "openai", "base_url": "ftp://x"}, "base_url must start with http"),
    ],
)
def test_typos_raise_an_error_naming_the_key(home, embedding, needle):
    write_config(home, embedding)
    with pytest.raises(SettingsError) as err:
        load_settings(home)
    assert needle in str(err.value)
    assert "plugins.project-history-recall.embedding" in str(err.value)


def test_broken_yaml_is_a_settings_error(home):
    write_config(home, "plugins: [unclosed\n")
    with pytest.raises(SettingsError, match="config.yaml"):
        load_settings(home)


def test_config_typo_makes_search_unavailable_not_crash(history):
    history.turns("s1", "hello there")
    write_config(history.home, {"chunk_sise": 100})
    result = semantic_search(history.home, "hello", ["s1"])
    assert result.status == "unavailable"
    assert "chunk_sise" in result.detail
    assert result.hits == []


def test_api_key_from_the_profiles_env_then_the_environment(home, monkeypatch):
    """One rule for every key (issue 38), Hermes' own: the profile's .env wins over the environment."""
    monkeypatch.setenv("PROJECT_HISTORY_EMBEDDING_API_KEY", "sk-from-env")
    assert resolve_api_key(home) == "sk-from-env"  # the .env has none
    (home / ".env").write_text("# comment\nexport PROJECT_HISTORY_EMBEDDING_API_KEY='sk-from-file'\n")
    assert resolve_api_key(home) == "sk-from-file"


def test_the_environment_key_stays_with_the_process_profile(home, monkeypatch):
    """A recall API launched in one profile serves others under /p/<name>: their provider gets
    their own .env key, never the launch profile's environment."""
    work = home / "profiles" / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("PROJECT_HISTORY_EMBEDDING_API_KEY", "sk-launch-profile")
    assert resolve_api_key(home) == "sk-launch-profile"  # HERMES_HOME is this process's profile
    assert resolve_api_key(work) is None
    (work / ".env").write_text("PROJECT_HISTORY_EMBEDDING_API_KEY=sk-work\n")
    assert resolve_api_key(work) == "sk-work"


def test_settings_never_hold_the_key(home, monkeypatch):
    monkeypatch.setenv("PROJECT_HISTORY_EMBEDDING_API_KEY", "sk-secret-123")
    write_config(home, {"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
    settings = load_settings(home)
    assert "sk-secret-123" not in repr(settings)
    assert "sk-secret-123" not in str(vars(settings))
