"""The read-only review pages behind review links: ``/review/<token>`` and its previews
and downloads, served by the app's own server with a strict content security policy."""

from __future__ import annotations

import secrets
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

import web
from ui.common import COMPARE

REVIEW_NOT_FOUND = ("<!doctype html><meta charset='utf-8'><title>Not found</title>"
                    "<p>This review link does not exist or has been revoked.</p>")


def _review_headers(nonce: str = "") -> dict[str, str]:
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    return {
        "Content-Security-Policy": (f"default-src 'none'; img-src 'self' data:; "
                                    f"style-src 'unsafe-inline'; script-src {script}; "
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


@review_router.get("/review/{token}/preview/{node}")
def review_preview(token: str, node: str) -> Response:
    """A state's display preview, for the review page."""
    try:
        path, media = web.review_preview(token, node)
    except web.ReviewNotFound:
        return _not_found()
    return FileResponse(path, media_type=media, headers=_review_headers())


@review_router.get("/review/{token}/download/{node}")
def review_download(token: str, node: str) -> Response:
    """A state at full resolution in the original format (ICC/EXIF kept)."""
    try:
        file = web.review_download(token, node)
    except web.ReviewNotFound:
        return _not_found()
    disposition = f"attachment; filename*=UTF-8''{quote(file.filename)}"
    return Response(file.data, media_type=file.media_type,
                    headers={**_review_headers(), "Content-Disposition": disposition})

