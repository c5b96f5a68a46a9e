"""The pages and files of the app's own routes, each with a strict content security
policy: ``/review/<token>`` (the review page behind a review link, its previews, the
pictures of its reference photos and downloads), the one route a reviewer posts to
(``/review/<token>/comments``: comments, pins, verdicts; it reaches only
``web.add_feedback`` and can never edit the session), and
``/files/<token>/…`` (the image and archive URLs of API/MCP results, ``web.links``).
Anything unknown answers 404."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

import web
from ui.common import COMPARE, private

REVIEW_NOT_FOUND = ("<!doctype html><meta charset='utf-8'><title>Not found</title>"
                    "<p>This review link does not exist or has been revoked.</p>")


def _review_headers(nonce: str = "") -> dict[str, str]:
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    return {
        "Content-Security-Policy": (f"default-src 'none'; img-src 'self' data:; "
                                    f"style-src 'unsafe-inline'; script-src {script}; "
                                    "connect-src 'self'; "
                                    "base-uri 'none'; form-action 'none'; "
                                    "frame-ancestors 'self'"),
        "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex, nofollow",
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store",
    }


def _not_found() -> HTMLResponse:
    return HTMLResponse(REVIEW_NOT_FOUND, status_code=404, headers=_review_headers())


review_router = APIRouter()


@review_router.get("/review/{token}", response_class=HTMLResponse)
def review(token: str, state: str = "", compare: str = "original") -> Response:
    """The read-only review page of a review link (404 when unknown or revoked)."""
    nonce = secrets.token_urlsafe(16)
    try:
        page = web.review_page(token, state or None, compare if compare in COMPARE
                               else "original", nonce=nonce)
    except web.ReviewNotFound:
        return _not_found()
    return HTMLResponse(page, headers=_review_headers(nonce))


def _preview(lookup: Callable[[str, str], tuple[Any, str]], token: str, node: str
             ) -> Response:
    """A state's display preview found by ``lookup`` (404 for anything it refuses)."""
    try:
        path, media = lookup(token, node)
    except web.ReviewNotFound:
        return _not_found()
    return FileResponse(path, media_type=media, headers=_review_headers())


def _download(lookup: Callable[[str, str], Any], token: str, node: str) -> Response:
    """A state at full resolution found by ``lookup`` (404 for anything it refuses)."""
    try:
        file = lookup(token, node)
    except web.ReviewNotFound:
        return _not_found()
    return _attachment(file.data, file.media_type, file.filename)


@review_router.get("/review/{token}/preview/{node}")
def review_preview(token: str, node: str) -> Response:
    """A state's display preview, for the review page."""
    return _preview(web.review_preview, token, node)


@review_router.get("/review/{token}/reference/{ref_id}")
def review_reference(token: str, ref_id: str) -> Response:
    """The picture of a reference photo the session keeps, for the review page."""
    return _preview(web.review_reference, token, ref_id)


@review_router.get("/review/{token}/download/{node}")
def review_download(token: str, node: str) -> Response:
    """A state at full resolution in the original format (ICC/EXIF kept)."""
    return _download(web.review_download, token, node)


@review_router.post("/review/{token}/comments")
async def review_comment(token: str, request: Request) -> Response:
    """A reviewer's comment, pin and/or verdict on one state (JSON in, JSON out).

    Only the review token reaches ``web.add_feedback``: nothing here can edit the session.
    Refused (with ``{"error": "..."}`` and the status of ``web.FeedbackRefused``): another
    site's request (403), a body that is not JSON or too big (415, 400, 413), an unknown or
    revoked link (404), text too long or a pin outside the photo (413, 400), a flood (429).
    """
    headers = _review_headers()
    try:
        web.feedback.check_origin(request.headers)
        if request.headers.get("content-type", "").split(";")[0].strip() != \
                "application/json":
            raise web.FeedbackRefused(415, "Send the comment as JSON, as the review page does.")
        body = await _capped_body(request, web.feedback.MAX_BODY_BYTES)
        try:
            data = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError):
            raise web.FeedbackRefused(400, "The comment could not be read (not JSON).") \
                from None
        if not isinstance(data, dict):
            raise web.FeedbackRefused(400, "The comment could not be read (not an object).")
        comment = await run_in_threadpool(
            web.add_feedback, token, data.get("state"), data.get("text"), data.get("name"),
            data.get("pin"), data.get("verdict"))
    except web.FeedbackRefused as exc:
        return JSONResponse({"error": web.user_message(exc)}, status_code=exc.status,
                            headers=headers)
    return JSONResponse({"comment": comment}, status_code=201, headers=headers)


async def _capped_body(request: Request, cap: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``cap`` bytes."""
    too_big = web.FeedbackRefused(413, f"The comment is too big: {cap // 1024} KB at most.")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


@review_router.get("/files/{token}/{node}/preview")
def file_preview(token: str, node: str) -> Response:
    """A state's display preview, for an API/MCP result's ``image_url``."""
    return _preview(web.link_preview, token, node)


@review_router.get("/files/{token}/{node}/download")
def file_download(token: str, node: str) -> Response:
    """A state at full resolution in the original format, for an API/MCP ``url``."""
    return _download(web.link_download, token, node)


@review_router.get("/files/{token}/export")
def file_export(token: str) -> Response:
    """The session as a zip archive (graph, layers, original, chat), for ``export_session``."""
    try:
        sid = web.link_session(token)
        path = web.export_archive(sid, folder=private)
    except (web.ReviewNotFound, web.SessionError):
        return _not_found()
    return FileResponse(path, media_type="application/zip", filename=path.name,
                        headers=_review_headers())


@review_router.get("/batch/{job_id}/{which}")
def batch_file(job_id: str, which: str) -> Response:
    """An ended batch job's ``results`` zip or ``report`` page, for the batch tools' URLs
    (the job id, 128 random bits, is the key; 404 for anything else)."""
    try:
        path, media, name = web.batch_file(job_id, which)
    except web.SessionError:
        return _not_found()
    if which == "report":  # a page of thumbnails (data: URLs) and text, no script
        return FileResponse(path, media_type=media, headers=_review_headers())
    return FileResponse(path, media_type=media, filename=name, headers=_review_headers())


def _attachment(data: bytes, media_type: str, filename: str) -> Response:
    disposition = f"attachment; filename*=UTF-8''{quote(filename)}"
    return Response(data, media_type=media_type,
                    headers={**_review_headers(), "Content-Disposition": disposition})
