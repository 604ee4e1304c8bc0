"""The store's users (``store.users``): adding users, tokens, sign-in, model
assessors, and the role check every lead-only action uses (``require_lead``).

Roles: ``assessor`` or ``lead``. Only a lead assigns, adjudicates, sets a
collection's rubric and publishes (``PermissionDeniedError`` otherwise). Tokens
are stored as PBKDF2-HMAC-SHA256 hashes with a per-user salt and compared with
``hmac.compare_digest``. The store checks *roles*; proving an identity with
a token (``authenticate``) is done once by the edge (CLI flag, UI sign-in).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.errors import (
    DuplicateNameError,
    PermissionDeniedError,
    UnknownNameError,
    ValidationError,
    shown,
)
from workbench.store._rows import _one
from workbench.store.core import Gateway
from workbench.store.model_assessors import (
    MODEL_ASSESSOR_COLUMNS,
    MODEL_KINDS,
    ModelAssessorInfo,
    model_assessor_info,
)

Role = Literal["assessor", "lead"]
ROLES: tuple[str, ...] = ("assessor", "lead")

PBKDF2_ITERATIONS = 100_000
"""PBKDF2-HMAC-SHA256 rounds for access tokens (about 50 ms per check)."""

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")

ItemKey = tuple[str, str]


_DUMMY_SALT = "00" * 16
_DUMMY_HASH = f"pbkdf2-sha256${PBKDF2_ITERATIONS}${'0' * 64}"
"""What an unknown user name is checked against: the same PBKDF2 cost as a real user."""


def check_user_name(name: str) -> str:
    """``name`` if it can be a user name: letters, digits and ``_.@-``, 1-64 characters, a letter or digit first.

    Raises:
        ValidationError: naming the value and the rule.
    """
    if not _NAME_RE.match(name or ""):
        raise ValidationError(f"expected a user name of letters, digits and _.@- (1-64 characters), found {name!r}")
    return name


def hash_token(token: str, salt: str, iterations: int = PBKDF2_ITERATIONS) -> str:
    """The stored form of a token: ``pbkdf2-sha256$<iterations>$<hex digest>``.

    Source:
        RFC 8018 (PKCS #5 v2.1) PBKDF2, via ``hashlib.pbkdf2_hmac``.
    """
    digest = hashlib.pbkdf2_hmac("sha256", token.encode("utf-8"), bytes.fromhex(salt), iterations)
    return f"pbkdf2-sha256${iterations}${digest.hex()}"


def _token_matches(token: str, salt: str, stored: str) -> bool:
    try:
        _scheme, iterations, _hex = stored.split("$")
        candidate = hash_token(token, salt, int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(candidate.encode(), stored.encode())


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A named user of the workbench (the token hash is never read out).

    Attributes:
        name: user name (letters, digits, ``_.@-``; at most 64 characters).
        role: ``assessor`` or ``lead``.
        created_by: the lead who added the user ("" for the first lead).
        created_at: when the user was added.
        kind: ``person``, or ``model`` for a model assessor (``workbench
            judge-with-model``): it saves judgments like a person but never signs in.
    """

    name: str
    role: str
    created_by: str
    created_at: datetime
    kind: str = "person"

    @property
    def is_model(self) -> bool:
        """True for a model assessor."""
        return self.kind == "model"

    @property
    def is_lead(self) -> bool:
        """True for the lead role."""
        return self.role == "lead"


def _user_from_row(row: Sequence[Any]) -> UserInfo:
    return UserInfo(row[0], row[1], row[2], row[3], "model" if len(row) > 6 and row[6] else "person")


_KIND = "user_name IN (SELECT user_name FROM model_assessors)"
"""SQL: the user is a model assessor (an uncorrelated IN: on every save, the correlated
EXISTS it replaces cost 2-6 ms to plan and run against 0.9 ms)."""

MODEL_TOKEN_HASH = "model-assessor"
"""The stored token hash of a model assessor: matches no token, so it can never sign in."""



def read_user(cur: Any, name: str) -> UserInfo:
    """A user by name, inside a lease.

    Raises:
        UnknownNameError: unknown user (listing the known ones).
    """
    row = _one(cur.execute(
        f"SELECT user_name, role, created_by, created_at, '', '', {_KIND} FROM users WHERE user_name = ?",
        [name],
    ))
    if row is None:
        known = [r[0] for r in cur.execute("SELECT user_name FROM users").fetchall()]
        raise UnknownNameError("user", name, known)
    return _user_from_row(row)


def require_lead(cur: Any, name: str, action: str) -> UserInfo:
    """The user ``name`` if they are a lead, inside a lease (every lead-only action checks it so).

    Raises:
        UnknownNameError: unknown user.
        PermissionDeniedError: the user is not a lead (naming ``action``).
    """
    user = read_user(cur, name)
    if not user.is_lead:
        raise PermissionDeniedError(
            f"{action}: user {name!r} has role {user.role!r}, expected 'lead'. "
            "Ask a lead to do it, or to add you with --role lead"
        )
    return user


class Users:
    """Users, tokens and model assessors (``store.users``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def add_user(
        self,
        name: str,
        role: Role = "assessor",
        *,
        token: str | None = None,
        lead: str | None = None,
    ) -> str:
        """Add a user with an access token; returns the token (shown once).

        The first lead of a store may be added by anyone (bootstrap); after
        that, ``lead`` must name an existing lead (authenticated by the caller).

        Args:
            name: user name: letters, digits and ``_.@-``, 1-64 characters.
            role: ``assessor`` or ``lead``.
            token: the token to set (at least 8 characters); None generates a
                random 22-character one.
            lead: the lead adding the user; required once a lead exists.

        Returns:
            The plain token. Only its salted hash is stored.

        Raises:
            ValidationError: bad name, role or token.
            DuplicateNameError: the name is taken.
            PermissionDeniedError: a lead exists and ``lead`` is missing or not a lead.
        """
        check_user_name(name)
        if role not in ROLES:
            raise ValidationError(f"expected role 'assessor' or 'lead', found {shown(role)}")
        if token is not None and (len(token) < 8 or token != token.strip()):
            raise ValidationError("expected a token of at least 8 characters without surrounding spaces")
        plain = token if token is not None else secrets.token_urlsafe(16)
        salt = secrets.token_hex(16)
        stored = hash_token(plain, salt)
        with self._gateway.transaction(f"add user {name}") as cur:
            n_leads = _one(cur.execute("SELECT count(*) FROM users WHERE role = 'lead'"))[0]
            if n_leads:
                if not lead:
                    raise PermissionDeniedError(
                        f"add user {name!r}: only a lead can add users; pass the lead's name and token"
                    )
                require_lead(cur, lead, f"add user {name!r}")
            if _one(cur.execute("SELECT 1 FROM users WHERE user_name = ?", [name])):
                raise DuplicateNameError(f"user {name!r} already exists; choose another name")
            cur.execute(
                "INSERT INTO users (user_name, role, token_hash, salt, created_by) VALUES (?, ?, ?, ?, ?)",
                [name, role, stored, salt, lead or ""],
            )
        return plain

    def reset_token(self, name: str, *, lead: str, token: str | None = None) -> str:
        """Give a user a new token (a lead's action); the old one stops working.

        Args:
            name: the user.
            lead: the lead doing it (role checked).
            token: the new token (>= 8 characters); None generates one.

        Returns:
            The new plain token (only its hash is stored).

        Raises:
            UnknownNameError: unknown user.
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: a token shorter than 8 characters.
        """
        if token is not None and (len(token) < 8 or token != token.strip()):
            raise ValidationError("expected a token of at least 8 characters without surrounding spaces")
        plain = token if token is not None else secrets.token_urlsafe(16)
        salt = secrets.token_hex(16)
        with self._gateway.transaction(f"reset token of {name}") as cur:
            require_lead(cur, lead, f"reset the token of {name!r}")
            if read_user(cur, name).is_model:
                raise ValidationError(f"{name!r} is a model assessor: it never signs in, so it has no token")
            cur.execute(
                "UPDATE users SET token_hash = ?, salt = ? WHERE user_name = ?",
                [hash_token(plain, salt), salt, name],
            )
        return plain

    def authenticate(self, name: str, token: str) -> UserInfo:
        """Check a user's token.

        Returns:
            The user.

        Raises:
            PermissionDeniedError: unknown user or wrong token (one message for
                both, so names cannot be probed).
        """
        with self._gateway.connection("sign in") as cur:
            row = _one(cur.execute(
                f"SELECT user_name, role, created_by, created_at, token_hash, salt, {_KIND} FROM users "
                "WHERE user_name = ?",
                [name],
            ))
        # An unknown name costs one hash check too, so the time taken does not
        # tell whether the user exists.
        salt, stored = (row[5], row[4]) if row is not None else (_DUMMY_SALT, _DUMMY_HASH)
        if not _token_matches(token or "", salt, stored) or row is None:
            raise PermissionDeniedError(f"sign-in failed for {name!r}: unknown user or wrong token")
        return _user_from_row(row)

    def token_fingerprint(self, name: str) -> str | None:
        """A short digest of the user's stored token hash (None for an unknown
        user): it changes when the token is reset, so a UI session opened with
        the old token can tell it is no longer valid. Reveals nothing usable."""
        with self._gateway.connection("read user") as cur:
            row = _one(cur.execute("SELECT token_hash FROM users WHERE user_name = ?", [name]))
        return None if row is None else hashlib.sha256(str(row[0]).encode()).hexdigest()[:16]

    def get_user(self, name: str) -> UserInfo:
        """A user by name. Raises UnknownNameError listing the users."""
        with self._gateway.connection("read user") as cur:
            return read_user(cur, name)

    def list_users(self) -> list[UserInfo]:
        """All users, sorted by name."""
        with self._gateway.connection("list users") as cur:
            rows = cur.execute(
                f"SELECT user_name, role, created_by, created_at, '', '', {_KIND} FROM users ORDER BY user_name"
            ).fetchall()
        return [_user_from_row(r) for r in rows]

    # -- model assessors -------------------------------------------------------

    def check_model_assessor_name(self, name: str, *, model: str, weights_hash: str) -> None:
        """Check, before any work, that ``name`` can be (or already is) this model's assessor.

        Raises:
            ValidationError: a bad name.
            DuplicateNameError: the name is a person, or a model assessor of another model or weights.
        """
        if not _NAME_RE.match(name or ""):
            raise ValidationError(
                f"expected a model assessor name of letters, digits and _.@- (1-64 characters), found {name!r}"
            )
        with self._gateway.connection(f"check model assessor {name}") as con:
            row = _one(con.execute(f"SELECT {MODEL_ASSESSOR_COLUMNS} FROM model_assessors WHERE user_name = ?", [name]))
            person = row is None and _one(con.execute("SELECT 1 FROM users WHERE user_name = ?", [name]))
        if row is not None:
            info = model_assessor_info(row)
            if (info.model, info.weights_hash) != (model, weights_hash):
                raise DuplicateNameError(
                    f"model assessor {name!r} already exists with model {info.model} "
                    f"(weights {info.weights_hash[:12]}); a model assessor never changes: choose another "
                    "name with --as"
                )
        elif person:
            raise DuplicateNameError(f"user {name!r} already exists (a person); choose another name with --as")

    def add_model_assessor(
        self,
        name: str,
        *,
        model: str,
        model_kind: str,
        weights_hash: str,
        grade_mapping: str,
        lead: str,
        fitted_on: str = "",
        fit: Mapping[str, Any] | None = None,
    ) -> ModelAssessorInfo:
        """Create a model assessor (a user of kind model), or return the same one.

        Creating it again with the same model, weights hash and grade mapping
        returns the stored one (so a re-run continues its judgments); anything
        else under a taken name is refused, since a model assessor's identity
        never changes.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: bad name or model kind.
            DuplicateNameError: the name is a person, or a model assessor with another identity.
        """
        if not _NAME_RE.match(name or ""):
            raise ValidationError(
                f"expected a model assessor name of letters, digits and _.@- (1-64 characters), found {name!r}"
            )
        if model_kind not in MODEL_KINDS:
            raise ValidationError(f"expected model kind {' or '.join(MODEL_KINDS)}, found {model_kind!r}")
        with self._gateway.transaction(f"add model assessor {name}") as cur:
            require_lead(cur, lead, f"add model assessor {name!r}")
            row = _one(cur.execute(f"SELECT {MODEL_ASSESSOR_COLUMNS} FROM model_assessors WHERE user_name = ?", [name]))
            if row is not None:
                info = model_assessor_info(row)
                if (info.model, info.model_kind, info.weights_hash, info.grade_mapping) == (
                        model, model_kind, weights_hash, grade_mapping):
                    return info
                raise DuplicateNameError(
                    f"model assessor {name!r} already exists with model {info.model} "
                    f"(weights {info.weights_hash[:12]}), grades {info.grade_mapping}; a model assessor "
                    "never changes: choose another name with --as"
                )
            if _one(cur.execute("SELECT 1 FROM users WHERE user_name = ?", [name])):
                raise DuplicateNameError(f"user {name!r} already exists (a person); choose another name with --as")
            cur.execute(
                "INSERT INTO users (user_name, role, token_hash, salt, created_by) VALUES (?, 'assessor', ?, ?, ?)",
                [name, MODEL_TOKEN_HASH, secrets.token_hex(16), lead],
            )
            cur.execute(
                "INSERT INTO model_assessors (user_name, model, model_kind, weights_hash, grade_mapping, fitted_on, "
                "fit, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [name, model, model_kind, weights_hash, grade_mapping, fitted_on, json.dumps(dict(fit or {})),
                 lead],
            )
            created = _one(cur.execute(f"SELECT {MODEL_ASSESSOR_COLUMNS} FROM model_assessors WHERE user_name = ?", [name]))
        return model_assessor_info(created)

    def model_assessor(self, name: str) -> ModelAssessorInfo | None:
        """A model assessor by name, or None when ``name`` is not one."""
        with self._gateway.connection("read model assessor") as cur:
            row = _one(cur.execute(f"SELECT {MODEL_ASSESSOR_COLUMNS} FROM model_assessors WHERE user_name = ?", [name]))
        return None if row is None else model_assessor_info(row)

    def list_model_assessors(self) -> list[ModelAssessorInfo]:
        """Every model assessor, by name."""
        with self._gateway.connection("list model assessors") as cur:
            rows = cur.execute(f"SELECT {MODEL_ASSESSOR_COLUMNS} FROM model_assessors ORDER BY user_name").fetchall()
        return [model_assessor_info(r) for r in rows]


def users_of(rows: Iterable[UserInfo], role: str) -> list[str]:
    """Names of the users having a role, sorted."""
    return sorted(u.name for u in rows if u.role == role)
