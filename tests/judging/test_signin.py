"""Sign-in: the per-user delay that grows with failures (QA defect: 30 wrong
tokens in 2 s, then the right one worked) and the unknown-user path that costs
one hash check like a known user's (QA defect: 0.7 ms unknown user against
61 ms for a known user with a wrong token). Time is passed in, never waited for."""

from __future__ import annotations

import pytest

from workbench.errors import PermissionDeniedError
from workbench.judging.signin import SignInThrottle, ThrottlePolicy
from workbench.services.judging import assessments as svc
from workbench.services.judging.assessments import SignInThrottledError


def test_delay_doubles_from_one_second_up_to_the_cap():
    p = ThrottlePolicy(base_s=1.0, cap_s=300.0)
    assert [p.delay_s(n) for n in (0, 1, 2, 3, 4, 9, 10, 30, 10_000)] == [
        0.0, 1.0, 2.0, 4.0, 8.0, 256.0, 300.0, 300.0, 300.0]


def test_an_attempt_inside_the_delay_is_not_checked_and_a_success_clears_the_failures():
    t = SignInThrottle(ThrottlePolicy(base_s=1.0, cap_s=300.0))
    now = 100.0
    for n in range(1, 6):  # five failures, each as soon as allowed
        assert t.begin("ann", now) == 0.0
        assert t.finish("ann", ok=False, now=now) == 2.0 ** (n - 1)
        now += 2.0 ** (n - 1)
    assert t.failures("ann", now) == 5
    assert t.begin("ann", now - 0.25) == pytest.approx(0.25)  # 16 s delay, 0.25 s of it left
    assert t.begin("ann", now) == 0.0
    assert t.begin("ann", now) == 1.0  # a parallel attempt while one is checked waits
    t.finish("ann", ok=True, now=now)
    assert t.failures("ann", now) == 0 and t.wait_s("ann", now) == 0.0
    assert t.wait_s("bob", now) == 0.0  # per user: others are not slowed


def test_failures_are_forgotten_and_names_are_bounded():
    t = SignInThrottle(ThrottlePolicy(forget_after_s=3600.0, max_names=3))
    t.begin("ann", 0.0)
    t.finish("ann", ok=False, now=0.0)
    assert t.failures("ann", 3600.0) == 1 and t.failures("ann", 3600.5) == 0
    for i, name in enumerate(["a", "b", "c", "d"]):
        t.begin(name, float(i))
        t.finish(name, ok=False, now=float(i))
    assert [t.failures(n, 10.0) for n in "abcd"] == [0, 1, 1, 1]  # the oldest dropped


def test_abandoned_check_records_nothing():
    t = SignInThrottle()
    t.begin("ann", 0.0)
    t.finish("ann", ok=False, now=0.0)
    assert t.begin("ann", 1.0) == 0.0
    t.abandon("ann")  # e.g. the store was busy: neither a failure nor a success
    assert t.failures("ann", 1.0) == 1 and t.begin("ann", 1.0) == 0.0


@pytest.fixture
def users(store):
    """The store's users (``store.users``, what sign-in and sessions take): a lead and ann."""
    store.users.add_user("lead", "lead", token="lead-token-1")
    store.users.add_user("ann", "assessor", token="ann-token-1", lead="lead")
    return store.users


def test_thirty_wrong_tokens_then_the_right_one_is_refused_until_the_delay_passed(users):
    t = SignInThrottle()
    checked = 0
    for i in range(30):  # 30 attempts within 2 s (at i/15 s), as in the QA report
        try:
            svc.sign_in(users, "ann", "wrong-token", throttle=t, now=i / 15)
        except SignInThrottledError:
            continue
        except PermissionDeniedError as e:
            assert "unknown user or wrong token; wait" in str(e)
            checked += 1
    assert checked == 2  # at 0 s (then 1 s delay) and at 1 s (then 2 s): the other 28 were not checked
    with pytest.raises(SignInThrottledError, match=r"too many failed sign-ins for 'ann': try again in 1 s"):
        svc.sign_in(users, "ann", "ann-token-1", throttle=t, now=2.0)  # the right token, too early
    session = svc.sign_in(users, "ann", "ann-token-1", throttle=t, now=3.0)  # 1 s + 2 s after the last failure
    assert session == svc.Session("ann", "assessor")
    assert t.failures("ann", 3.0) == 0  # a success clears the failures


def test_unknown_names_are_throttled_like_known_ones(users):
    t = SignInThrottle()
    for name in ("ann", "nobody"):
        with pytest.raises(PermissionDeniedError, match="unknown user or wrong token; wait 1 s"):
            svc.sign_in(users, name, "wrong-token", throttle=t, now=0.0)
        with pytest.raises(SignInThrottledError, match="try again in 1 s"):
            svc.sign_in(users, name, "wrong-token", throttle=t, now=0.5)


def test_unknown_user_costs_one_hash_check_like_a_known_user(users, monkeypatch):
    import hashlib

    import workbench.store.users as mod

    calls: list[int] = []
    real = hashlib.pbkdf2_hmac

    def counting(name, password, salt, iterations, *args):
        calls.append(iterations)
        return real(name, password, salt, iterations, *args)

    monkeypatch.setattr(mod.hashlib, "pbkdf2_hmac", counting)
    for name in ("ann", "nobody", ""):
        with pytest.raises(PermissionDeniedError, match="unknown user or wrong token"):
            users.authenticate(name, "wrong-token")
    assert calls == [mod.PBKDF2_ITERATIONS] * 3  # same work for a known and an unknown name
    calls.clear()
    assert users.authenticate("ann", "ann-token-1").name == "ann"
    assert calls == [mod.PBKDF2_ITERATIONS]


# -- server-side UI sessions ---------------------------------------------------------


def test_a_session_resumes_until_it_expires_is_signed_out_or_the_token_changes(users):
    from workbench.judging.signin import SessionRegistry
    from workbench.services.judging import sessions

    reg = SessionRegistry(ttl_s=3600.0)
    ann = svc.sign_in(users, "ann", "ann-token-1")
    sid, expires = sessions.open_session(users, reg, ann, now=10.0)
    assert expires == 3610.0 and len(sid) == 43 and "ann-token-1" not in sid
    assert sessions.resume_session(users, reg, sid, now=3609.0) == (ann, 3610.0)
    assert sessions.resume_session(users, reg, sid, now=3610.0) is None  # expired
    assert sessions.resume_session(users, reg, "forged-id", now=11.0) is None
    assert sessions.resume_session(users, reg, None, now=11.0) is None

    sid, _ = sessions.open_session(users, reg, ann, now=20.0)
    sessions.close_session(reg, sid)  # sign-out
    assert sessions.resume_session(users, reg, sid, now=21.0) is None

    sid, _ = sessions.open_session(users, reg, ann, now=30.0)
    users.reset_token("ann", lead="lead", token="ann-token-2")
    assert sessions.resume_session(users, reg, sid, now=31.0) is None  # the old token's session ends
    assert reg.resolve(sid, now=31.0) is None


def test_the_registry_keeps_only_a_hash_of_the_session_id():
    from workbench.judging.signin import SessionRegistry

    reg = SessionRegistry()
    sid = reg.open("ann", "assessor", "fp", now=0.0)
    assert sid not in repr(reg._by_key) and reg.resolve(sid, now=1.0).user == "ann"
    assert reg.close_user("ann") == 1 and reg.resolve(sid, now=1.0) is None
