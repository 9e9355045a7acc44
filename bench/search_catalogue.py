"""A generated catalogue of tool files and paraphrased queries for ``bench/search_quality.py``.

Tools are ``service x entity x action``: names as real servers spell them
(``github_delete_issue``, ``slackPostMessage``), descriptions and parameters
from templates. Each query names one tool in other words than its
description: an action paraphrase, an entity paraphrase and a service
paraphrase, drawn with a fixed seed. The paraphrase lists were written by
hand for this benchmark; some of their verbs are among the action synonyms
the index knows (``loader.registry.search_index``), so the figure is ours on
our catalogue, not a held-out one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CatalogueTool", "Query", "catalogue", "queries", "write_catalogue"]

# service key -> (label, paraphrases, camelCase names?, entity keys)
SERVICES: dict[str, tuple[str, tuple[str, ...], bool, tuple[str, ...]]] = {
    "github": (
        "GitHub",
        ("on GitHub", "in my git repo"),
        False,
        ("issue", "pull_request", "branch", "release", "comment"),
    ),
    "gitlab": (
        "GitLab",
        ("on GitLab", "in our gitlab"),
        True,
        ("issue", "merge_request", "pipeline", "branch"),
    ),
    "jira": ("Jira", ("in Jira", "in the jira board"), False, ("ticket", "sprint", "comment", "board")),
    "slack": ("Slack", ("in Slack", "on our team chat"), True, ("message", "channel", "reminder", "user")),
    "gmail": ("Gmail", ("in my Gmail", "in my google mail"), False, ("email", "draft", "label", "thread")),
    "calendar": (
        "Google Calendar",
        ("on my calendar", "in my schedule"),
        False,
        ("event", "meeting", "calendar"),
    ),
    "drive": ("Google Drive", ("in Drive", "in my cloud drive"), True, ("file", "folder", "permission")),
    "notion": ("Notion", ("in Notion", "in our wiki"), False, ("page", "database", "comment")),
    "salesforce": (
        "Salesforce",
        ("in Salesforce", "in the CRM"),
        True,
        ("contact", "lead", "opportunity", "account"),
    ),
    "hubspot": (
        "HubSpot",
        ("in HubSpot", "in our marketing CRM"),
        False,
        ("contact", "deal", "company", "campaign"),
    ),
    "stripe": (
        "Stripe",
        ("in Stripe", "in our payments account"),
        False,
        ("invoice", "payment", "customer", "subscription", "refund"),
    ),
    "shopify": (
        "Shopify",
        ("in the Shopify store", "in our online shop"),
        True,
        ("product", "order", "customer", "discount"),
    ),
    "aws": ("AWS", ("on AWS", "in our amazon cloud"), False, ("instance", "bucket", "volume", "snapshot")),
    "kubernetes": (
        "Kubernetes",
        ("in the k8s cluster", "in kubernetes"),
        False,
        ("pod", "deployment", "service", "namespace"),
    ),
    "postgres": (
        "PostgreSQL",
        ("in the postgres database", "in our SQL db"),
        False,
        ("table", "row", "index", "backup"),
    ),
    "zendesk": ("Zendesk", ("in Zendesk", "in customer support"), True, ("ticket", "user", "macro")),
    "trello": ("Trello", ("in Trello", "on the kanban"), False, ("card", "board", "list_column")),
    "asana": ("Asana", ("in Asana", "in our task tracker"), True, ("task", "project", "section")),
    "dropbox": ("Dropbox", ("in Dropbox", "in my dropbox account"), False, ("file", "folder", "shared_link")),
    "twilio": ("Twilio", ("with Twilio", "by SMS"), False, ("sms", "call", "phone_number")),
    "spotify": ("Spotify", ("on Spotify", "in my music app"), True, ("playlist", "track", "album")),
    "datadog": ("Datadog", ("in Datadog", "in monitoring"), False, ("monitor", "dashboard", "incident")),
    "confluence": (
        "Confluence",
        ("in Confluence", "in the team docs"),
        False,
        ("page", "space", "attachment"),
    ),
    "figma": ("Figma", ("in Figma", "in the design tool"), True, ("file", "comment", "component")),
    "linear": (
        "Linear",
        ("in Linear", "in our issue tracker"),
        False,
        ("issue", "cycle", "project", "label"),
    ),
}

# entity key -> (singular words, plural words, paraphrases, field name, field description)
ENTITIES: dict[str, tuple[str, str, tuple[str, ...], str, str]] = {
    "issue": ("issue", "issues", ("bug report", "issue"), "title", "Short summary of the issue"),
    "pull_request": ("pull request", "pull requests", ("PR", "code review request"), "head", "Source branch"),
    "merge_request": (
        "merge request",
        "merge requests",
        ("MR", "code review request"),
        "source_branch",
        "Branch to merge",
    ),
    "branch": ("branch", "branches", ("git branch", "branch"), "ref", "Commit or branch to start from"),
    "release": ("release", "releases", ("version release", "tagged release"), "tag", "Tag name"),
    "comment": ("comment", "comments", ("remark", "reply"), "body", "Text of the comment"),
    "pipeline": ("pipeline", "pipelines", ("CI run", "build pipeline"), "ref", "Branch to run on"),
    "ticket": ("ticket", "tickets", ("support case", "ticket"), "subject", "Ticket subject"),
    "sprint": ("sprint", "sprints", ("iteration", "sprint"), "goal", "Sprint goal"),
    "board": ("board", "boards", ("kanban board", "board"), "title", "Board title"),
    "message": ("message", "messages", ("chat message", "post"), "text", "Message text"),
    "channel": ("channel", "channels", ("chat room", "channel"), "topic", "Channel topic"),
    "reminder": ("reminder", "reminders", ("nudge", "reminder"), "when", "When to remind"),
    "user": ("user", "users", ("member", "person"), "email", "User email address"),
    "email": ("email", "emails", ("mail", "e-mail"), "subject", "Email subject line"),
    "draft": ("draft", "drafts", ("unsent mail", "draft"), "body", "Draft body"),
    "label": ("label", "labels", ("tag", "category"), "color", "Label color"),
    "thread": ("thread", "threads", ("conversation", "mail thread"), "snippet", "Thread snippet"),
    "event": ("event", "events", ("appointment", "event"), "start", "Start time"),
    "meeting": ("meeting", "meetings", ("call with people", "meeting"), "attendees", "People invited"),
    "calendar": ("calendar", "calendars", ("agenda", "calendar"), "timezone", "Time zone"),
    "file": ("file", "files", ("document", "file"), "path", "File path"),
    "folder": ("folder", "folders", ("directory", "folder"), "path", "Folder path"),
    "permission": ("permission", "permissions", ("access right", "sharing setting"), "role", "Role to grant"),
    "page": ("page", "pages", ("doc page", "article"), "title", "Page title"),
    "database": ("database", "databases", ("table of records", "database"), "schema", "Property schema"),
    "contact": ("contact", "contacts", ("person record", "contact"), "phone", "Phone number"),
    "lead": ("lead", "leads", ("prospect", "lead"), "source", "Where the lead came from"),
    "opportunity": (
        "opportunity",
        "opportunities",
        ("potential sale", "opportunity"),
        "amount",
        "Expected amount",
    ),
    "account": ("account", "accounts", ("client company", "account"), "industry", "Industry"),
    "deal": ("deal", "deals", ("sale in progress", "deal"), "stage", "Pipeline stage"),
    "company": ("company", "companies", ("organisation", "business"), "domain", "Company web domain"),
    "campaign": ("campaign", "campaigns", ("marketing blast", "campaign"), "audience", "Target audience"),
    "invoice": ("invoice", "invoices", ("bill", "invoice"), "amount", "Amount due"),
    "payment": ("payment", "payments", ("charge", "transaction"), "amount", "Amount charged"),
    "customer": ("customer", "customers", ("client", "buyer"), "email", "Customer email"),
    "subscription": ("subscription", "subscriptions", ("recurring plan", "membership"), "plan", "Plan ID"),
    "refund": ("refund", "refunds", ("money back", "reimbursement"), "reason", "Why the refund"),
    "product": ("product", "products", ("item for sale", "product"), "price", "Unit price"),
    "order": ("order", "orders", ("purchase", "order"), "status", "Fulfilment status"),
    "discount": ("discount", "discounts", ("coupon", "promo code"), "percent", "Percent off"),
    "instance": ("instance", "instances", ("virtual machine", "server"), "instance_type", "Machine size"),
    "bucket": ("bucket", "buckets", ("storage bucket", "S3 bucket"), "region", "Region"),
    "volume": ("volume", "volumes", ("disk", "block storage"), "size_gb", "Size in GB"),
    "snapshot": (
        "snapshot",
        "snapshots",
        ("disk image", "point-in-time copy"),
        "volume_id",
        "Volume to copy",
    ),
    "pod": ("pod", "pods", ("container group", "pod"), "image", "Container image"),
    "deployment": ("deployment", "deployments", ("rollout", "deployment"), "replicas", "Replica count"),
    "service": ("service", "services", ("load balancer", "service"), "port", "Port"),
    "namespace": ("namespace", "namespaces", ("cluster partition", "namespace"), "quota", "Resource quota"),
    "table": ("table", "tables", ("relation", "table"), "columns", "Column definitions"),
    "row": ("row", "rows", ("record", "entry"), "values", "Column values"),
    "index": ("index", "indexes", ("lookup index", "index"), "column", "Indexed column"),
    "backup": ("backup", "backups", ("dump", "restore point"), "target", "Where to store it"),
    "macro": ("macro", "macros", ("canned reply", "saved response"), "actions", "Actions it applies"),
    "card": ("card", "cards", ("sticky note", "card"), "due", "Due date"),
    "list_column": ("list", "lists", ("column", "lane"), "position", "Position on the board"),
    "task": ("task", "tasks", ("to-do", "work item"), "assignee", "Who does it"),
    "project": ("project", "projects", ("initiative", "project"), "owner", "Project owner"),
    "section": ("section", "sections", ("group of tasks", "section"), "name", "Section name"),
    "shared_link": ("shared link", "shared links", ("public link", "share URL"), "expires", "Expiry date"),
    "sms": ("SMS", "SMS messages", ("text message", "SMS"), "to", "Destination number"),
    "call": ("call", "calls", ("phone call", "voice call"), "to", "Number to call"),
    "phone_number": ("phone number", "phone numbers", ("telephone line", "number"), "area_code", "Area code"),
    "playlist": ("playlist", "playlists", ("mix", "playlist"), "public", "Whether others can see it"),
    "track": ("track", "tracks", ("song", "tune"), "artist", "Artist"),
    "album": ("album", "albums", ("record", "LP"), "artist", "Artist"),
    "monitor": ("monitor", "monitors", ("alert rule", "monitor"), "threshold", "Alert threshold"),
    "dashboard": ("dashboard", "dashboards", ("metrics board", "dashboard"), "widgets", "Widget definitions"),
    "incident": ("incident", "incidents", ("outage", "incident"), "severity", "Severity level"),
    "space": ("space", "spaces", ("team area", "space"), "key", "Space key"),
    "attachment": ("attachment", "attachments", ("attached file", "upload"), "filename", "File name"),
    "component": ("component", "components", ("design element", "component"), "variant", "Variant name"),
    "cycle": ("cycle", "cycles", ("iteration", "cycle"), "starts", "Start date"),
}

# action -> (description template, paraphrases, extra parameter name and description)
ACTIONS: dict[str, tuple[str, tuple[str, ...], tuple[str, str] | None]] = {
    "list": (
        "List the {plural} in {label}, newest first.",
        ("show me all", "enumerate every", "what are my"),
        ("limit", "Maximum number to return"),
    ),
    "get": (
        "Get one {singular} in {label} by its ID, with all its fields.",
        ("look up the", "pull up the", "retrieve details of the"),
        None,
    ),
    "create": ("Create a new {singular} in {label}.", ("make a new", "open a", "set up a"), None),
    "update": (
        "Update the fields of an existing {singular} in {label}.",
        ("change the", "edit the", "modify the"),
        None,
    ),
    "delete": (
        "Delete a {singular} from {label} permanently.",
        ("remove the", "get rid of the", "erase the"),
        None,
    ),
    "search": (
        "Search {plural} in {label} by free text.",
        ("find", "look for", "hunt for"),
        ("query", "Text to match"),
    ),
    "archive": (
        "Archive a {singular} in {label} so it is hidden but kept.",
        ("put away an old", "shelve the", "stow the"),
        None,
    ),
    "export": (
        "Export {plural} from {label} as a CSV file.",
        ("download all", "dump to a spreadsheet the", "save as csv the"),
        ("format", "Output format"),
    ),
    "count": (
        "Count the {plural} in {label}.",
        ("how many", "tally the", "number of"),
        ("filter", "Only count matching ones"),
    ),
    "duplicate": (
        "Duplicate a {singular} in {label} as a separate copy.",
        ("make a copy of the", "clone the", "copy the"),
        None,
    ),
    "share": (
        "Share a {singular} in {label} with another person.",
        ("give a colleague access to the", "send a link to the", "invite someone to the"),
        ("recipient", "Who gets access"),
    ),
}


@dataclass(frozen=True, slots=True)
class CatalogueTool:
    """One generated tool: its name, the file's source, and what it is (for queries)."""

    name: str
    service: str
    entity: str
    action: str
    source: str


@dataclass(frozen=True, slots=True)
class Query:
    """One query and the one tool it is after."""

    text: str
    expected: str


def _name(service: str, entity: str, action: str, camel: bool) -> str:
    parts = [service, action, *entity.split("_")]
    if camel:
        return parts[0] + "".join(part.capitalize() for part in parts[1:])
    return "_".join(parts)


def _source(name: str, service: str, entity: str, action: str) -> str:
    label = SERVICES[service][0]
    singular, plural, _, field, field_doc = ENTITIES[entity]
    template, _, extra = ACTIONS[action]
    params = [f'{entity}_id: Annotated[str, Field(description="ID of the {singular}")]']
    if action in ("create", "update"):
        params.append(f'{field}: Annotated[str, Field(description="{field_doc}")]')
    if extra is not None:
        params.append(f'{extra[0]}: Annotated[str, Field(description="{extra[1]}")] = ""')
    if action in ("list", "search", "export", "count", "create"):
        params = params[1:]  # no ID: these act on many, or on one not made yet
    description = template.format(singular=singular, plural=plural, label=label)
    return (
        "from typing import Annotated\n\nfrom pydantic import Field\n\nfrom loader import tool\n\n\n"
        f"@tool\ndef {name}({', '.join(params)}) -> str:\n"
        f'    """{description}"""\n'
        "    return 'ok'\n"
    )


def catalogue(size: int = 1000) -> list[CatalogueTool]:
    """Up to ``size`` tools, the same every run."""
    tools: list[CatalogueTool] = []
    for service, (_, _, camel, entities) in SERVICES.items():
        for entity in entities:
            for action in ACTIONS:
                name = _name(service, entity, action, camel)
                tools.append(
                    CatalogueTool(name, service, entity, action, _source(name, service, entity, action))
                )
    random.Random(39).shuffle(tools)
    return sorted(tools[:size], key=lambda t: t.name)


def queries(tools: list[CatalogueTool], count: int = 200) -> list[Query]:
    """``count`` paraphrased queries, each after one tool of ``tools``."""
    rng = random.Random(3939)
    chosen = rng.sample(tools, min(count, len(tools)))
    out: list[Query] = []
    for item in chosen:
        action = rng.choice(ACTIONS[item.action][1])
        entity = rng.choice(ENTITIES[item.entity][2])
        place = rng.choice(SERVICES[item.service][1])
        out.append(Query(f"{action} {entity} {place}", item.name))
    return out


def write_catalogue(folder: Path, tools: list[CatalogueTool]) -> None:
    """One file per tool, named after it."""
    folder.mkdir(parents=True, exist_ok=True)
    for item in tools:
        (folder / f"{item.name}.py").write_text(item.source)
