"""The consent chain: local needs none; remote needs a record matching provider, endpoint,
model and projects; any change needs a new confirmation."""

from __future__ import annotations

import json
import os

from hermes_side.embedding import consent_state, read_consent, record_consent, revoke_consent
from hermes_side.embedding.consent import consent_path
from hermes_side.embedding.settings import EmbeddingSettings

REMOTE = EmbeddingSettings(provider="openai", model="text-embedding-3-small", base_url="http://127.0.0.1:1/v1")


def test_local_never_needs_consent(home):
    assert consent_state(home, EmbeddingSettings(), "default", ["p1"]) == "not_needed"


def test_remote_requires_then_grants_for_listed_projects(home):
    assert consent_state(home, REMOTE, "default", ["p1"]) == "required"
    record = record_consent(home, REMOTE, "default", ["p1"])
    assert record["scope"] == "history+incremental"
    assert set(record) == {"profile", "projects", "provider", "endpoint", "model", "confirmed_at", "scope"}
    assert consent_state(home, REMOTE, "default", ["p1"]) == "granted"
    assert consent_state(home, REMOTE, "default", ["p2"]) == "required"  # scope widened
    assert consent_state(home, REMOTE, "default", ["p1", "p2"]) == "required"
    assert consent_state(home, REMOTE, "default", []) == "required"  # "everything"
    assert consent_state(home, REMOTE, "work", ["p1"]) == "required"  # other profile


def test_grants_add_up_and_star_covers_all(home):
    record_consent(home, REMOTE, "default", ["p1"])
    record_consent(home, REMOTE, "default", ["p2"])
    assert read_consent(home)["projects"] == ["p1", "p2"]
    assert consent_state(home, REMOTE, "default", ["p1", "p2"]) == "granted"
    record_consent(home, REMOTE, "default", ["*"])
    assert consent_state(home, REMOTE, "default", ["anything"]) == "granted"
    assert consent_state(home, REMOTE, "default", []) == "granted"


def test_changing_endpoint_provider_or_model_needs_new_consent(home):
    record_consent(home, REMOTE, "default", ["*"])
    moved = EmbeddingSettings(provider="openai", model=REMOTE.model, base_url="http://127.0.0.1:2/v1")
    other_model = EmbeddingSettings(provider="openai", model="text-embedding-3-large", base_url=REMOTE.base_url)
    assert consent_state(home, moved, "default", ["p1"]) == "required"
    assert consent_state(home, other_model, "default", ["p1"]) == "required"
    # a new service starts a fresh record instead of inheriting projects
    record_consent(home, moved, "default", ["p9"])
    assert read_consent(home)["projects"] == ["p9"]
    assert consent_state(home, REMOTE, "default", ["p1"]) == "required"


def test_revoke_and_corrupt_file(home):
    assert revoke_consent(home) is False
    record_consent(home, REMOTE, "default", ["p1"])
    assert revoke_consent(home) is True
    assert consent_state(home, REMOTE, "default", ["p1"]) == "required"
    consent_path(home).write_text("{not json")
    assert read_consent(home) is None
    assert consent_state(home, REMOTE, "default", ["p1"]) == "required"


def test_writes_are_atomic_and_leave_no_temp_files(home):
    record_consent(home, REMOTE, "default", ["p1"])
    record_consent(home, REMOTE, "default", ["p2"])
    files = os.listdir(consent_path(home).parent)
    assert files == ["consent.json"]
    assert json.loads(consent_path(home).read_text())["projects"] == ["p1", "p2"]
