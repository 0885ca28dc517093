"""What every page shares: templates, headers, who the request acts for, form tokens.

Pages are rendered on the server by Jinja2 with autoescaping on; every value printed also
loses its control characters (see :func:`clean`). Every UI response carries a strict
Content-Security-Policy (only this origin's stylesheet and script, no inline code, forms post
only here, no framing) and ``Cache-Control: no-store``.

A page acts for the owner of the ``kioku_key`` cookie the sign-in form sets (or of a bearer
key), or, on a server without keys on loopback, for the store's default owner. Every form that
changes something is posted with a token: an HMAC of the server's secret and the key id (or
``local``), so a page of another site cannot post one; a post whose ``Origin`` is another
site is refused too.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import parse_qs, quote

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.responses import HTMLResponse, RedirectResponse, Response

from kioku.core.sanitize import FORBIDDEN
from kioku.interfaces.http.access import resolve_access
from kioku.interfaces.http.problems import Problem

if TYPE_CHECKING:
    from starlette.requests import Request

    from kioku.interfaces.http.settings import ServerState
    from kioku.interfaces.http.tenants import Access
    from kioku.service.kioku import Kioku

__all__ = ["CSP", "HERE", "Web", "clean", "local_time"]

T = TypeVar("T")

HERE: Final = Path(__file__).resolve().parent

#: Only this origin's files, no inline script or style, forms post only here, never framed.
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: Final[Mapping[str, str]] = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
#: The largest form body read, in bytes (the server's own limit applies first).
MAX_FORM_BYTES: Final = 256 * 1024
_NEWLINES: Final = re.compile(r"\r\n?")
#: What a page says after a redirect (``?notice=...``): fixed words, never the URL's.
NOTICES: Final[Mapping[str, str]] = {
    "saved": "Saved.",
    "protected": "Protected: it will not fade.",
    "unprotected": "No longer protected: it fades like any other from the next batch.",
    "forgotten": "Forgotten: the memory and its relations are erased.",
    "signed-in": "Signed in.",
    "signed-out": "Signed out.",
}


def clean(text: str) -> str:
    """``text`` without control characters (newlines and tabs kept) or bidi overrides."""
    return FORBIDDEN.sub("", _NEWLINES.sub("\n", text))


def _finalize(value: object) -> object:
    if isinstance(value, Markup) or not isinstance(value, str):
        return "" if value is None else value
    return clean(value)


def local_time(moment: datetime | None, *, seconds: bool = False) -> str:
    """``2025-01-15 14:30`` in the server's local time (empty for None)."""
    if moment is None:
        return ""
    shown = moment.astimezone()
    return shown.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = local_time
    env.filters["clean"] = clean
    env.filters["pct"] = lambda x: f"{float(x):.0%}"
    return env


class Web:
    """The UI of one server: its templates and the state its pages act on."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.env = _environment()

    # -- rendering ---------------------------------------------------------------------------

    def render(
        self,
        request: Request,
        template: str,
        *,
        access: Access | None = None,
        status: int = 200,
        **context: Any,
    ) -> HTMLResponse:
        page = self.env.get_template(template).render(
            request=request,
            path=request.url.path,
            access=access,
            csrf=self.token(access) if access is not None else self.token(None),
            notice=NOTICES.get(request.query_params.get("notice", ""), ""),
            **context,
        )
        return HTMLResponse(page, status_code=status, headers=dict(HEADERS))

    def error(
        self,
        request: Request,
        status: int,
        title: str,
        message: str,
        *,
        access: Access | None = None,
        hint: str | None = None,
    ) -> HTMLResponse:
        return self.render(
            request,
            "error.html",
            access=access,
            status=status,
            title=title,
            message=message,
            hint=hint,
        )

    @staticmethod
    def redirect(url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=303, headers=dict(HEADERS))

    # -- who the request acts for -----------------------------------------------------------

    async def access(self, request: Request) -> Access | Response:
        """The request's access, or the response to send instead (to /login, or a 403 page)."""
        state = self.state
        try:
            return await anyio.to_thread.run_sync(
                lambda: resolve_access(request, state.tenants, require_keys=state.require_keys)
            )
        except Problem as problem:
            if problem.status == 401:
                target = request.url.path
                if request.url.query:
                    target += "?" + request.url.query
                response = self.redirect("/login?next=" + quote(target, safe="/"))
                if request.cookies.get("kioku_key"):
                    response.delete_cookie("kioku_key", path="/")
                return response
            return self.error(
                request, problem.status, "Not allowed", problem.detail, hint=problem.hint
            )

    async def run(self, access: Access, work: Callable[[Kioku], T]) -> T:
        """``work(kioku)`` for ``access``'s owner, in a worker thread, in turn."""
        return await self.state.tenants.call(access, work)

    # -- forms ---------------------------------------------------------------------------------

    def token(self, access: Access | None) -> str:
        """The form token of ``access`` (its key id, or ``local``; ``anonymous`` signed out)."""
        subject = "anonymous" if access is None else (access.key_id or "local")
        return hmac.new(self.state.secret, subject.encode(), hashlib.sha256).hexdigest()

    def same_origin(self, request: Request) -> bool:
        """Whether the request's Origin header, when it has one, is this server."""
        origin = request.headers.get("origin")
        if origin is None:
            return True
        host = request.headers.get("host", "")
        return origin == f"{request.url.scheme}://{host}"

    async def form(self, request: Request, access: Access | None) -> dict[str, str] | Response:
        """The posted fields (the first value of each), or a 403 page when the post is not
        this server's own form (a foreign Origin, no token or a wrong one)."""
        if not self.same_origin(request):
            return self.error(
                request,
                403,
                "Refused",
                "this form was sent from another site",
                access=access,
            )
        body = await request.body()
        fields: dict[str, str] = {}
        if len(body) <= MAX_FORM_BYTES:
            parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            fields = {name: values[0] for name, values in parsed.items() if values}
        sent = fields.get("csrf", "")
        if not sent or not hmac.compare_digest(sent, self.token(access)):
            return self.error(
                request,
                403,
                "Refused",
                "this form has no valid token; reload the page and send it again",
                access=access,
            )
        return fields

    async def writer_form(self, request: Request) -> tuple[Access, dict[str, str]] | Response:
        """The access and fields of a post that changes memories (a read-write key)."""
        access = await self.access(request)
        if isinstance(access, Response):
            return access
        fields = await self.form(request, access)
        if isinstance(fields, Response):
            return fields
        if not access.can_write:
            return self.error(
                request, 403, "Read only", "this API key may only read", access=access
            )
        return access, fields
