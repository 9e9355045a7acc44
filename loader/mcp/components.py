"""``prompts/*``, ``resources/*`` and ``completion/complete``, answered from the served snapshot.

The prompts, resources and resource templates live in the same registry
snapshot as the tools (``RegistrySnapshot.components``), so one request reads
one generation. Prompt and resource functions run on a worker thread, never on
the event loop. A missing prompt, an unknown URI or a missing argument is a
``-32602`` error naming it (SEP-2164 for resources: ``data.uri``).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from ..components.prompts import Prompt
from ..components.resources import Content, Resource, ResourceTemplate
from ..context.handlers import with_handlers
from ..errors import ComponentArgumentError, InputRequired
from ..registry.snapshot import RegistrySnapshot
from ..results import error_result
from ..types import ComponentKind, new_tool_use_id
from .context import LogLevels, call_context
from .skills import ServedSkills
from .wire import DIGEST_META_KEY, EXPECTED_DIGEST_META_KEY

__all__ = ["MAX_COMPLETIONS", "ResourceSubscriptions", "ServedComponents"]

logger = logging.getLogger(__name__)

MAX_COMPLETIONS = 100
"""The most values one ``completion/complete`` answer may carry (the spec's limit)."""

_Context = ServerRequestContext[dict[str, Any]]


def _prompt_entry(prompt: Prompt) -> types.Prompt:
    arguments = [
        types.PromptArgument(name=a.name, description=a.description, required=a.required)
        for a in prompt.arguments
    ]
    return types.Prompt(**_named(prompt), arguments=arguments or None)


def _resource_entry(resource: Resource) -> types.Resource:
    return types.Resource(uri=resource.uri, mime_type=resource.mime_type, **_named(resource))


def _template_entry(template: ResourceTemplate) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=template.uri_template, mime_type=template.mime_type, **_named(template)
    )


def _named(component: Prompt | Resource | ResourceTemplate) -> dict[str, Any]:
    """The name and title every listing entry shows, and its description (else the title, else the name)."""
    return {
        "name": component.name,
        "title": component.title,
        "description": component.description or component.title or component.name,
    }


def contents_of(
    uri: str, content: Content, mime_type: str | None
) -> types.TextResourceContents | types.BlobResourceContents:
    """One ``resources/read`` entry: text as it is, bytes as base64."""
    if isinstance(content, str):
        return types.TextResourceContents(uri=uri, mime_type=mime_type or "text/plain", text=content)
    blob = base64.b64encode(content).decode("ascii")
    return types.BlobResourceContents(uri=uri, mime_type=mime_type or "application/octet-stream", blob=blob)


def _invalid(exc: ComponentArgumentError) -> MCPError:
    data = None if exc.argument is None else {"argument": exc.argument}
    return MCPError(INVALID_PARAMS, str(exc), data)


def _failed(what: str, exc: BaseException) -> MCPError:
    logger.warning("component=<%s> | raised %s: %s", what, type(exc).__name__, exc)
    return MCPError(INTERNAL_ERROR, f"{what} failed: {type(exc).__name__}: {exc}")


class ServedComponents:
    """The request handlers for prompts, resources and completion, over ``current()``'s snapshot."""

    def __init__(
        self, current: Callable[[], RegistrySnapshot], log_levels: LogLevels, skills: ServedSkills
    ) -> None:
        self._current = current
        self._log_levels = log_levels
        self._skills = skills

    async def list_prompts(
        self, ctx: _Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        found = self._current().components(ComponentKind.PROMPT)
        return types.ListPromptsResult(prompts=[_prompt_entry(p) for p in found if isinstance(p, Prompt)])

    async def get_prompt(
        self, ctx: _Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        prompt = self._current().component(ComponentKind.PROMPT, params.name)
        if not isinstance(prompt, Prompt):
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name}", {"name": params.name})
        arguments = dict(params.arguments or {})
        handlers = call_context(ctx, params, self._log_levels)  # a prompt may ask, as a tool does
        try:
            state = with_handlers(None, handlers)
            messages = await anyio.to_thread.run_sync(prompt.messages, arguments, state)
            return types.GetPromptResult(
                description=prompt.description,
                messages=[types.PromptMessage.model_validate(m) for m in messages],
            )
        except ComponentArgumentError as exc:
            raise _invalid(exc) from exc
        except (Exception, InputRequired) as exc:
            # A question ended this round (2026-07-28): the client answers and asks again.
            rounds = handlers.round_result(error_result(new_tool_use_id(), str(exc)))
            if rounds is not None:
                return types.InputRequiredResult.model_validate(rounds)
            raise _failed(f"prompt {params.name!r}", exc) from exc
        finally:
            await handlers.close()

    async def list_resources(
        self, ctx: _Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        found = self._current().components(ComponentKind.RESOURCE)
        listed = [_resource_entry(r) for r in found if isinstance(r, Resource)]
        listed += [  # a skill's SKILL.md (SEP-2640); its other files are read by the URIs its manifest lists
            types.Resource(
                uri=e.skill.uri, name=e.skill.name, description=e.skill.description, mime_type="text/markdown"
            )
            for e in self._skills.entries()
        ]
        return types.ListResourcesResult(resources=listed)

    async def list_resource_templates(
        self, ctx: _Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        found = self._current().components(ComponentKind.RESOURCE_TEMPLATE)
        entries = [_template_entry(t) for t in found if isinstance(t, ResourceTemplate)]
        return types.ListResourceTemplatesResult(resource_templates=entries)

    async def read_resource(
        self, ctx: _Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if self._skills.serves(uri):
            return self._read_skill_file(ctx, uri, (params.meta or {}).get(EXPECTED_DIGEST_META_KEY))
        snapshot = self._current()
        resource = snapshot.component(ComponentKind.RESOURCE, uri)
        try:
            if isinstance(resource, Resource):
                content = await anyio.to_thread.run_sync(resource.read)
                return types.ReadResourceResult(contents=[contents_of(uri, content, resource.mime_type)])
            for template in snapshot.components(ComponentKind.RESOURCE_TEMPLATE):
                if isinstance(template, ResourceTemplate) and template.match(uri) is not None:
                    content = await anyio.to_thread.run_sync(template.read, uri)
                    return types.ReadResourceResult(contents=[contents_of(uri, content, template.mime_type)])
        except ComponentArgumentError as exc:
            raise _invalid(exc) from exc
        except Exception as exc:
            raise _failed(f"resource {uri!r}", exc) from exc
        raise MCPError(INVALID_PARAMS, "Resource not found", {"uri": uri})

    def _read_skill_file(self, ctx: _Context, uri: str, expected: object) -> types.ReadResourceResult:
        file = self._skills.read(ctx, uri, expected)
        if file is None:
            raise MCPError(INVALID_PARAMS, "Resource not found", {"uri": uri})
        entry = contents_of(uri, file.read(), file.mime_type)
        entry.meta = {DIGEST_META_KEY: file.digest}
        return types.ReadResourceResult(contents=[entry])

    async def complete(self, ctx: _Context, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        snapshot = self._current()
        values: list[str] = []
        if isinstance(ref, types.PromptReference):
            prompt = snapshot.component(ComponentKind.PROMPT, ref.name)
            if isinstance(prompt, Prompt):
                values = prompt.completions(params.argument.name, params.argument.value)
        else:
            template = snapshot.component(ComponentKind.RESOURCE_TEMPLATE, ref.uri)
            if isinstance(template, ResourceTemplate):
                values = template.completions(params.argument.name, params.argument.value)
        completion = types.Completion(
            values=values[:MAX_COMPLETIONS], total=len(values), has_more=len(values) > MAX_COMPLETIONS
        )
        return types.CompleteResult(completion=completion)


class ResourceSubscriptions:
    """Handshake-era ``resources/subscribe``: the sessions that want ``notifications/resources/updated``.

    A URI may be subscribed before anything serves it (a file saved later).
    """

    def __init__(self) -> None:
        self._by_uri: dict[str, dict[int, ServerSession]] = {}

    async def subscribe(self, ctx: _Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        # Keyed by connection (its client_params): the SDK builds a new ServerSession per request.
        self._by_uri.setdefault(str(params.uri), {})[id(ctx.session.client_params)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(self, ctx: _Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        sessions = self._by_uri.get(str(params.uri), {})
        sessions.pop(id(ctx.session.client_params), None)
        if not sessions:
            self._by_uri.pop(str(params.uri), None)
        return types.EmptyResult()

    async def notify(self, uris: frozenset[str], timeout: float) -> None:
        """Tell each subscriber of each URI; a session that fails or stalls is forgotten."""
        async with anyio.create_task_group() as group:
            for uri in uris:
                for key, session in list(self._by_uri.get(uri, {}).items()):
                    group.start_soon(self._notify, uri, key, session, timeout)

    async def _notify(self, uri: str, key: int, session: ServerSession, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            try:
                await session.send_resource_updated(uri)
                return
            except Exception:
                logger.debug("uri=<%s> | a subscribed session is gone", uri, exc_info=True)
        self._by_uri.get(uri, {}).pop(key, None)
