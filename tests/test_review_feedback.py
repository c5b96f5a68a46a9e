"""Reviewers answer back: comments, pins and verdicts through a review link.

The store and its limits through the ``web`` calls the UI, API and MCP tools use, the
review page's HTML, the POST route over HTTP (same-origin checks, size caps, a revoked
link), and exported archives of both session versions.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import web
from web import feedback, share


@pytest.fixture()
def manager():
    mgr = web.SessionManager(ttl_hours=1.0)
    web.set_manager(mgr)
    feedback._SENT.clear()
    yield mgr
    web.set_manager(None)


@pytest.fixture()
def edited(manager, coffee: np.ndarray) -> str:
    """A session on the 600×400 coffee photo with one edit (states n0, n1)."""
    sid = web.open_beside(None, coffee, "coffee.png").session_id
    _, result = web.edit_turn(sid, "make it warmer")
    assert result["ok"] and result["head"] == "n1"
    return sid


def _token(sid: str) -> str:
    return share.token_from_url(web.share_link(sid))


def _refused(status: int, match: str, fn, *args, **kwargs) -> str:
    with pytest.raises(web.FeedbackRefused, match=match) as info:
        fn(*args, **kwargs)
    assert info.value.status == status
    return str(info.value)


# ----------------------------------------------------------------------------- the store


def test_a_reviewer_comments_with_a_pin_and_a_verdict_and_the_owner_tends_it(edited: str):
    token = _token(edited)
    made = web.add_feedback(token, "n1", "The cup looks too orange here.", "Ana",
                            [300, 200], "changes")
    assert made["state"] == "n1" and made["pin"] == [300, 200] and not made["stale"]
    web.add_feedback(token, "n0", "Lovely original.", pin=[10, 20, 110, 90])
    web.add_feedback(token, "n1", verdict="approve")  # a verdict alone is fine

    got = web.review_comments(edited)
    assert set(got) == {"session_id", "count", "open", "comments", "verdicts"}
    assert got["session_id"] == edited and got["count"] == 3 and got["open"] == 3
    first = got["comments"][0]
    assert set(first) == {"id", "state", "name", "text", "pin", "verdict", "created",
                          "resolved", "stale"}
    assert (first["name"], first["text"], first["pin"]) == ("Ana", "The cup looks too "
                                                            "orange here.", [300, 200])
    assert got["comments"][1]["pin"] == [10, 20, 110, 90]
    assert [v["verdict"] for v in got["verdicts"]] == ["approve"]  # latest per state
    json.dumps(got)  # JSON-serialisable as it is

    # the owner edits further: the verdicts are now out of date, the comment is not
    web.edit_turn(edited, "increase the contrast")
    after = web.review_comments(edited)["comments"]
    assert [c["stale"] for c in after] == [True, False, True]

    ask = web.comment_instruction(edited, first["id"])
    assert ask["text"] == "The cup looks too orange here." and ask["state"] == "n1"
    x0, y0, x1, y1 = ask["box"]
    assert x0 < 300 < x1 and y0 < 200 < y1 and (x1 - x0) < 100  # a small square

    assert web.resolve_comment(edited, first["id"]) == {
        "session_id": edited, "comment_id": first["id"], "resolved": True, "open": 2}
    assert web.delete_comment(edited, first["id"]) == {
        "session_id": edited, "comment_id": first["id"], "deleted": True, "count": 2}
    with pytest.raises(web.SessionError, match="no comment with that id"):
        web.resolve_comment(edited, first["id"])
    with pytest.raises(web.SessionError):  # a review token is never an owner's id
        web.review_comments(token)


def test_limits_are_refused_with_clear_messages(edited: str, monkeypatch, coffee):
    token = _token(edited)
    monkeypatch.setenv("LOUPE_REVIEW_COMMENT_CHARS", "50")
    monkeypatch.setenv("LOUPE_REVIEW_RATE_PER_MIN", "100")  # the flood test is below
    msg = _refused(413, "limit is 50", web.add_feedback, token, "n1", "x" * 51)
    assert "51 characters" in msg
    _refused(413, "name", web.add_feedback, token, "n1", "ok", "n" * 81)
    _refused(400, "outside the photo, which is 600×400", web.add_feedback, token, "n1",
             "here", pin=[600, 10])
    _refused(400, "not inside the photo", web.add_feedback, token, "n1", "here",
             pin=[-5, 0, 20, 20])
    _refused(400, "point", web.add_feedback, token, "n1", "here", pin=["1", 2])
    _refused(400, "point", web.add_feedback, token, "n1", "here", pin=[float("nan"), 2])
    _refused(400, "Write a comment", web.add_feedback, token, "n1", "   ")
    _refused(400, "approve or request changes", web.add_feedback, token, "n1", "x",
             verdict="merge")
    _refused(400, "approve or request changes", web.add_feedback, token, "n1", "x",
             verdict={"approve": 1})
    _refused(400, "not in this photo's history", web.add_feedback, token, ["n1"], "x")
    _refused(400, "not in this photo's history", web.add_feedback, token, "n9", "x")
    _refused(400, "must be text", web.add_feedback, token, "n1", {"html": 1})

    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    _refused(404, "does not exist or has been revoked", web.add_feedback, forged, "n1", "x")
    _refused(404, "revoked", web.add_feedback, edited, "n1", "x")  # a session id: no
    assert web.review_comments(edited)["count"] == 0  # nothing above was stored

    # another session's token writes only to that session, and only about its states
    other = web.open_beside(None, coffee, "other.png").session_id
    other_token = _token(other)
    _refused(400, "not in this photo's history", web.add_feedback, other_token, "n1", "x")
    web.add_feedback(other_token, "n0", "for the other photo")
    assert web.review_comments(edited)["count"] == 0
    assert web.review_comments(other)["count"] == 1
    assert web.review_page(token).count("for the other photo") == 0


def test_a_flood_is_cut_by_the_rate_limit_and_the_session_total(edited: str, monkeypatch):
    token = _token(edited)
    monkeypatch.setenv("LOUPE_REVIEW_RATE_PER_MIN", "3")
    for i in range(3):
        web.add_feedback(token, "n1", f"comment {i}", now=1000.0 + i)
    _refused(429, "3 a minute at most", web.add_feedback, token, "n1", "one more",
             now=1010.0)
    web.add_feedback(token, "n1", "a minute later", now=1070.0)  # the window moved on
    web.add_feedback(_token(edited), "n1", "another link has its own budget", now=1010.5)

    monkeypatch.setenv("LOUPE_REVIEW_MAX_COMMENTS", "5")
    monkeypatch.setenv("LOUPE_REVIEW_RATE_PER_MIN", "100")
    _refused(429, "already has 5 comments", web.add_feedback, token, "n1", "too many",
             now=2000.0)
    assert web.review_comments(edited)["count"] == 5


def test_a_revoked_link_stops_taking_comments_and_the_owner_keeps_them(edited: str):
    url = web.share_link(edited)
    token = share.token_from_url(url)
    web.add_feedback(token, "n1", "before the revoke")
    assert web.revoke_share(edited, url)
    _refused(404, "revoked", web.add_feedback, token, "n1", "after the revoke")
    assert [c["text"] for c in web.review_comments(edited)["comments"]] == ["before the revoke"]


def test_comments_go_with_the_session(edited: str):
    token = _token(edited)
    web.add_feedback(token, "n1", "bye")
    folder = web.get_manager().root / edited
    assert (folder / feedback.FEEDBACK_FILE).is_file()
    web.delete_session(edited)
    assert not folder.exists()
    with pytest.raises(web.SessionError):
        web.review_comments(edited)


def test_opening_another_photo_in_the_session_drops_its_comments(edited: str, coffee):
    web.add_feedback(_token(edited), "n1", "about the old photo")
    web.open_image(edited, coffee, "new.png")
    assert web.review_comments(edited)["count"] == 0


# ----------------------------------------------------------------------------- the page


def test_the_review_page_shows_comments_as_text_and_pins_on_their_state(edited: str):
    token = _token(edited)
    web.add_feedback(token, "n1", '<script>alert(1)</script><b onclick="x()">bold</b>',
                     "<img src=x onerror=alert(2)>", [150, 100], "changes")
    page = web.review_page(token, "n1", nonce="abc")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onclick=" in page
    assert page.count("<script") == 1 and '<script nonce="abc">' in page
    assert 'data-pin="1"' in page and "left:25.000%;top:25.000%" in page
    assert "Changes requested" in page and 'data-notes="1"' in page  # graph marker
    assert 'id="c-text"' in page and 'data-state="n1"' in page
    assert "data-pin=" not in web.review_page(token, "n0")  # pins only on their state
    web.edit_turn(edited, "increase the contrast")
    assert "out of date" in web.review_page(token, "n1")


# ----------------------------------------------------------------------------- HTTP


@pytest.fixture()
def http(manager) -> TestClient:
    from ui.review_routes import review_router

    api = FastAPI()
    api.include_router(review_router)
    return TestClient(api, base_url="http://review.test")


def _post(http: TestClient, token: str, body, origin: str | None = "http://review.test",
          **headers):
    if origin is not None:
        headers["Origin"] = origin
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    headers.setdefault("Content-Type", "application/json")
    return http.post(f"/review/{token}/comments", content=data, headers=headers)


def test_the_post_route_takes_only_same_origin_json_within_the_caps(http, edited: str):
    url = web.share_link(edited)
    token = share.token_from_url(url)
    ok = {"state": "n1", "text": "nice", "pin": [1, 2], "verdict": "approve"}
    answer = _post(http, token, ok)
    assert answer.status_code == 201 and answer.json()["comment"]["text"] == "nice"
    assert "connect-src 'self'" in answer.headers["content-security-policy"]

    refusals = [
        (_post(http, token, ok, origin="http://evil.test"), 403, "only from the review page"),
        (_post(http, token, ok, origin=None), 403, "only from the review page"),
        (_post(http, token, ok, origin="null"), 403, "only from the review page"),
        (_post(http, token, ok, origin=None, Referer="http://evil.test/x"), 403, "another"),
        (_post(http, token, ok, origin="http://evil.test", **{"X-Forwarded-Host":
                                                              "evil.test"}), 403, "another"),
        (_post(http, edited, ok), 404, "revoked"),  # a session id is not a review token
        (_post(http, token, ok, **{"Sec-Fetch-Site": "cross-site"}), 403, "another"),
        (_post(http, token, ok, **{"Sec-Fetch-Site": "same-site"}), 403, "another"),
        (_post(http, token, "state=n1&text=hi", **{"Content-Type":
                                                    "application/x-www-form-urlencoded"}),
         415, "JSON"),
        (_post(http, token, b"{not json"), 400, "not JSON"),
        (_post(http, token, {"state": "n1", "text": "y" * 70_000}), 413, "too big"),
        (_post(http, token, {**ok, "pin": [9999, 1]}), 400, "outside the photo"),
        (_post(http, token[:-1] + ("A" if token[-1] != "A" else "B"), ok), 404, "revoked"),
    ]
    for response, status, words in refusals:
        assert response.status_code == status, (status, response.text)
        message = response.json()["error"]
        assert words in message
        assert edited not in message and token not in message and "/" not in message
    referer_ok = _post(http, token, ok, origin=None, Referer=f"http://review.test{url}")
    assert referer_ok.status_code == 201
    # behind a proxy the page's origin is the public host, not the Host the app sees: the
    # browser's own same-origin verdict is what counts
    proxied = _post(http, token, ok, origin="https://public.example",
                    **{"Sec-Fetch-Site": "same-origin"})
    assert proxied.status_code == 201

    web.revoke_share(edited, url)
    gone = _post(http, token, ok)
    assert gone.status_code == 404 and "revoked" in gone.json()["error"]
    assert web.review_comments(edited)["count"] == 3


# ----------------------------------------------------------------------------- archives


def test_comments_travel_in_archives_and_old_archives_still_open(edited: str, tmp_path):
    token = _token(edited)
    web.add_feedback(token, "n1", "pinned", "Bo", [5, 6, 50, 60], "changes")
    c2 = web.add_feedback(token, "n0", "plain")
    web.resolve_comment(edited, c2["id"])
    before = web.review_comments(edited)["comments"]

    archive = Path(web.export_archive(edited))
    with zipfile.ZipFile(archive) as zf:
        session = json.loads(zf.read("session.json"))
        assert session["version"] == 3 and feedback.FEEDBACK_MEMBER in zf.namelist()  # 3: issue 35
    back = web.import_beside(None, archive).session_id
    assert back != edited and web.review_comments(back)["comments"] == before

    # a version-1 archive (written before comments existed) still opens, with none
    old = tmp_path / "old.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(old, "w") as dst:
        for info in src.infolist():
            if info.filename == feedback.FEEDBACK_MEMBER:
                continue
            data = src.read(info)
            if info.filename == "session.json":
                data = json.dumps({**session, "version": 1}).encode()
            dst.writestr(info, data)
    opened = web.import_beside(None, old).session_id
    assert web.graph_json(opened)["head"] == "n1"
    assert web.review_comments(opened)["count"] == 0

    # a newer version than this Loupe reads is refused, naming the user's file
    new = tmp_path / "future.zip"
    with zipfile.ZipFile(old) as src, zipfile.ZipFile(new, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "session.json":
                data = json.dumps({**session, "version": 4}).encode()  # 3: issue 35
            dst.writestr(info, data)
    with pytest.raises(web.SessionError, match="unknown session version 4"):
        web.import_beside(None, new)


def test_hostile_feedback_in_an_archive_is_rebuilt_or_dropped(edited: str, tmp_path):
    archive = Path(web.export_archive(edited))
    bad = tmp_path / "bad.zip"
    records = [
        {"id": "ok1", "state": "n1", "text": "kept\x00\u202e", "pin": [1, 1]},
        {"id": "../x", "state": "n1", "text": "bad id"},
        {"id": "p2", "state": "n7", "text": "no such state"},
        {"id": "p3", "state": "n1", "text": "pin out", "pin": [601, 1]},
        {"id": "p4", "state": "n1", "text": "y" * 10_000, "verdict": "<b>"},
        {"id": "p5", "state": "n1", "text": "unhashable verdict", "verdict": {"a": 1},
         "pin": [True, 1]},
        "not a record",
    ]
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(feedback.FEEDBACK_MEMBER, json.dumps(
            {"format": feedback.FORMAT, "version": 1, "comments": records}))
    sid = web.import_beside(None, bad).session_id
    got = web.review_comments(sid)["comments"]
    assert [c["id"] for c in got] == ["ok1", "p4"]  # p5: a pin of booleans is refused
    assert got[0]["text"] == "kept" and got[1]["verdict"] is None
    assert len(got[1]["text"]) == 4000


def test_owner_list_is_escaped_and_offers_the_actions(edited: str):
    web.add_feedback(_token(edited), "n1", "<i>x</i>", "<b>Mallory</b>", [3, 4])
    summary = web.review_comments(edited)
    out = feedback.render_list(summary, {"n1": "Warm up"})
    assert "<i>x</i>" not in out and "&lt;i&gt;x&lt;/i&gt;" in out
    assert "&lt;b&gt;Mallory" in out and "Warm up" in out
    cid = summary["comments"][0]["id"]
    for attr in ("data-go", "data-use", "data-resolve", "data-delete"):
        assert re.search(f'{attr}="{cid}"', out)


def test_use_as_instruction_holds_the_pin_as_the_next_turns_area(edited: str):
    token = _token(edited)
    made = web.add_feedback(token, "n1", "make it brighter", pin=[300, 200])
    web.checkout(edited, "n0")
    view, path, ask = web.use_comment(edited, made["id"])
    assert view.head == "n1" and ask["text"] == "make it brighter"  # nothing ran
    assert len(web.graph_json(edited)["nodes"]) == 2 and path.is_file()
    assert web.pending_selection(edited) == {"state": "n1", "box": [288, 188, 313, 213]}

    view, result = web.edit_turn(edited, ask["text"])  # the owner sends it
    assert result["ok"] and web.pending_selection(edited) is None  # used once
    edit = web.get_manager().get(edited).edit
    diff = edit.image_at(result["head"]).astype(int) - edit.image_at("n1").astype(int)
    assert diff[190:211, 290:311].mean() > 3  # inside the pin's square
    rows, cols = np.nonzero(np.abs(diff).max(axis=2))
    assert rows.min() >= 188 - 12 and rows.max() < 213 + 12  # nothing elsewhere (the
    assert cols.min() >= 288 - 12 and cols.max() < 313 + 12  # edge is feathered a little)

    web.use_comment(edited, made["id"])  # held for n1 …
    web.checkout(edited, "n0")
    assert web.pending_selection(edited) is None  # … not for another state
    _, again = web.edit_turn(edited, "make it brighter")
    base = web.get_manager().get(edited).edit
    whole = base.image_at(again["head"]).astype(int) - base.image_at("n0").astype(int)
    assert whole[:, :100].mean() > 3  # the whole photo: the held area did not leak
