"""A second, held-out catalogue and query set for ``bench/search_quality.py``.

The ranking in ``loader.registry.search_index`` was tuned on the other set
(``bench/search_catalogue.py``, the "hard" set) only. This one was written
before that tuning started and was not looked at while tuning: different
services and entities, several description templates per action (as real
servers word them differently), and queries written as a user asks an agent
("post a note to the team channel on Discord about the outage"), with their
own paraphrase lists and filler words that match nothing or the wrong tool.
Its difficulty was set, before any of our figures on it were seen, so that
plain BM25 lands near the issue's held-out figure (about 0.7).
"""

from __future__ import annotations

import random
from pathlib import Path

from .search_catalogue import CatalogueTool, Query

__all__ = ["catalogue", "queries", "write_catalogue"]

# service key -> (label, how users name it, camelCase names?, entity keys)
SERVICES: dict[str, tuple[str, tuple[str, ...], bool, tuple[str, ...]]] = {
    "discord": (
        "Discord",
        ("on Discord", "in our discord server"),
        False,
        ("message", "channel", "role", "member"),
    ),
    "teams": ("Microsoft Teams", ("in Teams", "on microsoft teams"), True, ("message", "channel", "meeting")),
    "outlook": (
        "Outlook",
        ("in Outlook", "in my outlook inbox"),
        False,
        ("email", "contact", "event", "folder"),
    ),
    "bitbucket": (
        "Bitbucket",
        ("on Bitbucket", "in bitbucket"),
        True,
        ("repository", "pull_request", "branch"),
    ),
    "pagerduty": (
        "PagerDuty",
        ("in PagerDuty", "on pagerduty"),
        False,
        ("incident", "schedule", "escalation"),
    ),
    "sentry": (
        "Sentry",
        ("in Sentry", "in our error tracker"),
        False,
        ("issue", "project", "release", "alert"),
    ),
    "airtable": ("Airtable", ("in Airtable", "in the airtable base"), True, ("record", "table", "view")),
    "clickup": ("ClickUp", ("in ClickUp", "in clickup"), False, ("task", "list", "goal")),
    "box": ("Box", ("in Box", "in our box account"), False, ("file", "folder", "collaboration")),
    "mailchimp": (
        "Mailchimp",
        ("in Mailchimp", "in mailchimp"),
        True,
        ("campaign", "audience", "subscriber"),
    ),
    "intercom": ("Intercom", ("in Intercom", "on intercom"), False, ("conversation", "contact", "article")),
    "freshdesk": ("Freshdesk", ("in Freshdesk", "on the helpdesk"), False, ("ticket", "agent", "contact")),
    "quickbooks": ("QuickBooks", ("in QuickBooks", "in the books"), True, ("invoice", "customer", "expense")),
    "paypal": ("PayPal", ("on PayPal", "in paypal"), False, ("payment", "payout", "dispute")),
    "woocommerce": (
        "WooCommerce",
        ("in WooCommerce", "in the woo store"),
        False,
        ("product", "order", "coupon"),
    ),
    "gcp": ("Google Cloud", ("on GCP", "in google cloud"), False, ("instance", "bucket", "firewall_rule")),
    "azure": (
        "Azure",
        ("on Azure", "in azure"),
        True,
        ("virtual_machine", "storage_account", "resource_group"),
    ),
    "docker": (
        "Docker",
        ("in Docker", "on the docker host"),
        False,
        ("container", "image", "volume", "network"),
    ),
    "mongodb": ("MongoDB", ("in MongoDB", "in mongo"), False, ("collection", "document", "index")),
    "youtube": ("YouTube", ("on YouTube", "on our youtube channel"), True, ("video", "playlist", "comment")),
    "twitter": ("X (Twitter)", ("on Twitter", "on X"), False, ("tweet", "follower", "direct_message")),
    "zoom": ("Zoom", ("on Zoom", "in zoom"), True, ("meeting", "recording", "webinar")),
    "okta": ("Okta", ("in Okta", "in our identity provider"), False, ("user", "group", "application")),
    "snowflake": (
        "Snowflake",
        ("in Snowflake", "in the data warehouse"),
        False,
        ("warehouse", "table", "stage"),
    ),
    "todoist": ("Todoist", ("in Todoist", "on my todo app"), True, ("task", "project", "label")),
    "sheets": (
        "Google Sheets",
        ("in Google Sheets", "in the spreadsheet app"),
        False,
        ("spreadsheet", "sheet", "row"),
    ),
    "jenkins": ("Jenkins", ("in Jenkins", "on the CI server"), False, ("job", "build", "node")),
    "vercel": ("Vercel", ("on Vercel", "in vercel"), True, ("deployment", "domain", "project")),
    "monday": ("monday.com", ("in Monday", "on monday.com"), False, ("item", "board", "update_post")),
    "hubstaff": (
        "Hubstaff",
        ("in Hubstaff", "in the time tracker"),
        False,
        ("timesheet", "member", "project"),
    ),
}

# entity key -> (singular, plural, what users call it instead)
ENTITIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "message": ("message", "messages", ("note", "chat post")),
    "channel": ("channel", "channels", ("room", "chat room")),
    "role": ("role", "roles", ("permission group", "rank")),
    "member": ("member", "members", ("person", "participant")),
    "meeting": ("meeting", "meetings", ("call", "sync")),
    "email": ("email", "emails", ("mail", "e-mail")),
    "contact": ("contact", "contacts", ("person", "address book entry")),
    "event": ("event", "events", ("appointment", "calendar entry")),
    "folder": ("folder", "folders", ("directory", "dir")),
    "repository": ("repository", "repositories", ("repo", "codebase")),
    "pull_request": ("pull request", "pull requests", ("PR", "code review")),
    "branch": ("branch", "branches", ("feature branch", "git branch")),
    "incident": ("incident", "incidents", ("outage", "page")),
    "schedule": ("on-call schedule", "on-call schedules", ("rota", "on-call rotation")),
    "escalation": ("escalation policy", "escalation policies", ("escalation rules", "paging policy")),
    "issue": ("issue", "issues", ("error", "crash")),
    "project": ("project", "projects", ("workspace project", "initiative")),
    "release": ("release", "releases", ("version", "deploy")),
    "alert": ("alert rule", "alert rules", ("alarm", "notification rule")),
    "record": ("record", "records", ("row", "entry")),
    "table": ("table", "tables", ("sheet of data", "dataset")),
    "view": ("view", "views", ("saved filter", "grid view")),
    "task": ("task", "tasks", ("todo", "to-do item")),
    "list": ("list", "lists", ("checklist", "task list")),
    "goal": ("goal", "goals", ("objective", "OKR")),
    "file": ("file", "files", ("document", "doc")),
    "collaboration": ("collaboration", "collaborations", ("shared access", "collaborator")),
    "campaign": ("campaign", "campaigns", ("newsletter", "email blast")),
    "audience": ("audience", "audiences", ("mailing list", "list of recipients")),
    "subscriber": ("subscriber", "subscribers", ("signup", "recipient")),
    "conversation": ("conversation", "conversations", ("chat", "support chat")),
    "article": ("help article", "help articles", ("knowledge base article", "FAQ entry")),
    "ticket": ("ticket", "tickets", ("support request", "case")),
    "agent": ("agent", "agents", ("support rep", "staff member")),
    "invoice": ("invoice", "invoices", ("bill", "statement")),
    "customer": ("customer", "customers", ("client", "buyer")),
    "expense": ("expense", "expenses", ("cost", "spending")),
    "payment": ("payment", "payments", ("transaction", "charge")),
    "payout": ("payout", "payouts", ("transfer", "withdrawal")),
    "dispute": ("dispute", "disputes", ("chargeback", "claim")),
    "product": ("product", "products", ("item", "listing")),
    "order": ("order", "orders", ("purchase", "sale")),
    "coupon": ("coupon", "coupons", ("discount code", "voucher")),
    "instance": ("VM instance", "VM instances", ("server", "virtual machine")),
    "bucket": ("bucket", "buckets", ("storage bucket", "object store")),
    "firewall_rule": ("firewall rule", "firewall rules", ("ingress rule", "network rule")),
    "virtual_machine": ("virtual machine", "virtual machines", ("VM", "server")),
    "storage_account": ("storage account", "storage accounts", ("blob storage", "storage")),
    "resource_group": ("resource group", "resource groups", ("group of resources", "rg")),
    "container": ("container", "containers", ("running app", "docker container")),
    "image": ("image", "images", ("docker image", "build image")),
    "volume": ("volume", "volumes", ("disk", "mounted storage")),
    "network": ("network", "networks", ("bridge network", "subnet")),
    "collection": ("collection", "collections", ("mongo collection", "set of documents")),
    "document": ("document", "documents", ("json record", "doc")),
    "index": ("index", "indexes", ("indices", "lookup index")),
    "video": ("video", "videos", ("clip", "upload")),
    "playlist": ("playlist", "playlists", ("mix", "series")),
    "comment": ("comment", "comments", ("reply", "remark")),
    "tweet": ("tweet", "tweets", ("post", "status update")),
    "follower": ("follower", "followers", ("fan", "follow")),
    "direct_message": ("direct message", "direct messages", ("DM", "private message")),
    "recording": ("recording", "recordings", ("cloud recording", "video of the call")),
    "webinar": ("webinar", "webinars", ("online seminar", "livestream")),
    "user": ("user", "users", ("account", "employee")),
    "group": ("group", "groups", ("team", "user group")),
    "application": ("application", "applications", ("app", "app integration")),
    "warehouse": ("warehouse", "warehouses", ("compute cluster", "compute warehouse")),
    "stage": ("stage", "stages", ("staging area", "external stage")),
    "label": ("label", "labels", ("tag", "category")),
    "spreadsheet": ("spreadsheet", "spreadsheets", ("workbook", "sheet file")),
    "sheet": ("sheet", "sheets", ("tab", "worksheet")),
    "row": ("row", "rows", ("line", "entry")),
    "job": ("job", "jobs", ("pipeline", "CI job")),
    "build": ("build", "builds", ("CI run", "run")),
    "node": ("node", "nodes", ("agent machine", "build agent")),
    "deployment": ("deployment", "deployments", ("deploy", "rollout")),
    "domain": ("domain", "domains", ("hostname", "custom domain")),
    "item": ("item", "items", ("pulse", "board item")),
    "board": ("board", "boards", ("kanban", "workspace board")),
    "update_post": ("update", "updates", ("status post", "progress note")),
    "timesheet": ("timesheet", "timesheets", ("hours", "time log")),
}

# action -> (description templates, how users ask for it: {one} / {many} / {place} / {topic})
ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "list": (
        (
            "List all {plural} in the {label} workspace.",
            "Returns a paginated list of {plural} from {label}.",
            "Retrieve {plural}, optionally filtered by status.",
        ),
        (
            "show me every {many} {place}",
            "what {many} do we have {place}",
            "give me an overview of all the {many} {place}",
            "list our {many} {place}",
        ),
    ),
    "get": (
        (
            "Get details for a single {singular} by ID.",
            "Fetch a {label} {singular} by its identifier.",
            "Retrieves one {singular} from {label}, including metadata.",
        ),
        (
            "pull up the {one} {place} with id 4821",
            "I need the details of {one} 77 {place}",
            "open the {one} about {topic} {place} and tell me what's in it",
            "what does the {one} for {topic} say {place}",
        ),
    ),
    "create": (
        (
            "Create a {singular} in {label}.",
            "Creates a new {label} {singular} and returns it.",
            "Add a {singular} to {label} with the given fields.",
        ),
        (
            "add a {one} {place} for {topic}",
            "set up a new {one} {place} about {topic}",
            "make a {one} for {topic} {place}",
            "start a fresh {one} {place} for {topic}",
        ),
    ),
    "update": (
        (
            "Update an existing {singular}.",
            "Modify the properties of a {label} {singular}.",
            "Patch fields on a {singular} in {label}.",
        ),
        (
            "change the {one} {place}, {topic} moved",
            "fix the details on the {one} for {topic} {place}",
            "rename the {one} {place} to {topic}",
            "edit the {one} about {topic} {place}",
        ),
    ),
    "delete": (
        (
            "Delete a {singular} from {label}.",
            "Permanently removes the given {label} {singular}.",
            "Deletes a {singular} by ID. This cannot be undone.",
        ),
        (
            "get rid of the {one} {place} about {topic}",
            "delete that {one} {place}",
            "throw away the old {one} for {topic} {place}",
            "remove the {one} {place}, we don't need it",
        ),
    ),
    "search": (
        (
            "Search {label} {plural} matching a query.",
            "Full-text search across {plural}.",
            "Find {plural} in {label} by keyword.",
        ),
        (
            "look for {many} mentioning {topic} {place}",
            "find any {many} about {topic} {place}",
            "search {place} for {many} that mention {topic}",
            "are there {many} related to {topic} {place}",
        ),
    ),
    "copy": (
        (
            "Duplicate a {singular} in {label}.",
            "Creates a copy of an existing {singular}.",
            "Clone a {label} {singular}, including its settings.",
        ),
        (
            "make a duplicate of the {one} {place}",
            "clone the {one} for {topic} {place}",
            "copy the {one} {place} so I can reuse it for {topic}",
            "I want a second {one} just like the {topic} one {place}",
        ),
    ),
    "restore": (
        (
            "Restore a deleted {singular} in {label}.",
            "Recovers a {singular} from the trash.",
            "Undo the deletion of a {label} {singular}.",
        ),
        (
            "bring back the {one} I deleted {place}",
            "undo deleting the {one} for {topic} {place}",
            "recover the {one} about {topic} {place} from the bin",
            "the {one} for {topic} was removed by mistake {place}, get it back",
        ),
    ),
}

TOPICS = (
    "the outage",
    "the Q3 launch",
    "Maria's onboarding",
    "the billing bug",
    "next week's offsite",
    "the security review",
    "the new pricing",
    "our biggest client",
    "the holiday party",
    "the migration",
)

PARAMETERS = ("id", "identifier", "key")


def _name(service: str, entity: str, action: str, camel: bool) -> str:
    parts = [service, action, *entity.split("_")]
    if camel:
        return parts[0] + "".join(part.capitalize() for part in parts[1:])
    return "_".join(parts)


def _source(rng: random.Random, name: str, service: str, entity: str, action: str) -> str:
    label = SERVICES[service][0]
    singular, plural, _ = ENTITIES[entity]
    description = rng.choice(ACTIONS[action][0]).format(singular=singular, plural=plural, label=label)
    key = f"{entity}_{rng.choice(PARAMETERS)}"
    if action in ("list",):
        params = ['page_size: Annotated[int, Field(description="How many results per page")] = 50']
    elif action == "search":
        params = ['query: Annotated[str, Field(description="Search text")]']
    elif action == "create":
        params = [f'name: Annotated[str, Field(description="Name of the {singular}")]']
    elif action == "update":
        params = [
            f'{key}: Annotated[str, Field(description="The {singular} to change")]',
            'fields: Annotated[str, Field(description="JSON of the fields to set")]',
        ]
    else:
        params = [f'{key}: Annotated[str, Field(description="Which {singular}")]']
    return (
        "from typing import Annotated\n\nfrom pydantic import Field\n\nfrom loader import tool\n\n\n"
        f"@tool\ndef {name}({', '.join(params)}) -> str:\n"
        f'    """{description}"""\n'
        "    return 'ok'\n"
    )


def catalogue(size: int = 1000) -> list[CatalogueTool]:
    """Up to ``size`` tools, the same every run."""
    rng = random.Random(4242)
    tools: list[CatalogueTool] = []
    for service, (_, _, camel, entities) in SERVICES.items():
        for entity in entities:
            for action in ACTIONS:
                name = _name(service, entity, action, camel)
                source = _source(rng, name, service, entity, action)
                tools.append(CatalogueTool(name, service, entity, action, source))
    rng.shuffle(tools)
    return sorted(tools[:size], key=lambda t: t.name)


def queries(tools: list[CatalogueTool], count: int = 200) -> list[Query]:
    """``count`` requests as a user would write them, each after one tool of ``tools``."""
    rng = random.Random(424242)
    chosen = rng.sample(tools, min(count, len(tools)))
    out: list[Query] = []
    for item in chosen:
        singular, plural, others = ENTITIES[item.entity]
        if rng.random() < 0.25:
            one = many = rng.choice(others)
        else:
            one, many = singular, plural
        place = rng.choice(SERVICES[item.service][1]) if rng.random() < 0.95 else ""
        text = rng.choice(ACTIONS[item.action][1]).format(
            one=one, many=many, place=place, topic=rng.choice(TOPICS)
        )
        out.append(Query(" ".join(text.split()), item.name))
    return out


def write_catalogue(folder: Path, tools: list[CatalogueTool]) -> None:
    """One file per tool, named after it."""
    folder.mkdir(parents=True, exist_ok=True)
    for item in tools:
        (folder / f"{item.name}.py").write_text(item.source)
