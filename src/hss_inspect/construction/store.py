"""A build in one SQLite file: its settings, the pool's items, the people with their roles
and private tokens, the tasks with every revision, each review round's reviewer and
verdict, and the checks' flags.

A task is a `draft` until its author submits it, then in `review` at round 1; a Pass deals
the next round (after the last, the task is `admitted`), an Edit returns it to its author
(`returned`; the revision they submit starts again at round 1, the earlier revisions and
verdicts kept), a Drop ends it (`dropped`). Every write is one transaction committed before
the server answers (`web.store`); a verdict is keyed by its task, revision and round, and a
submit by the revision's own state, so a second send of either stores nothing.

This module is the one door the rest of the package reads and writes a build by; the
work is done in `build_file` (the file, people, pool), `task_views` (what is read of a
task), `revisions` (an author's writes) and `rounds` (review rounds and check flags).
"""

from __future__ import annotations

from hss_inspect.construction.build_file import (
    ADDED_SCHEMA,
    AUTHORED,
    BUILD,
    IMPORTED,
    POOL_SHOWN,
    ROLES,
    Person,
    PoolPage,
    canary_of,
    check_build,
    connect,
    create_build,
    item_owner,
    items_by_id,
    names_of,
    pool_items,
    pool_page,
    reading,
    settings_of,
    tokens_of,
)
from hss_inspect.construction.revisions import (
    import_rows,
    new_task,
    release_item,
    save_draft,
    submit_task,
    write_revision,
)
from hss_inspect.construction.rounds import (
    Flag,
    checked,
    dealt_to,
    decide,
    enter_round,
    flags_of,
    mark_shown,
    next_review,
    store_flags,
    verdicts_given,
)
from hss_inspect.construction.task_views import (
    SLOT_COLUMNS,
    ReviewSlot,
    RevisionTimes,
    TaskHistory,
    TaskView,
    admitted,
    awaiting_review,
    build_funnel_inputs,
    criteria_json,
    criteria_of,
    dropped_by,
    edit_marks,
    histories,
    task_view,
    task_views,
    tasks_of_author,
    view_of,
)

__all__ = [
    "ADDED_SCHEMA",
    "AUTHORED",
    "BUILD",
    "IMPORTED",
    "POOL_SHOWN",
    "ROLES",
    "SLOT_COLUMNS",
    "Flag",
    "Person",
    "PoolPage",
    "ReviewSlot",
    "RevisionTimes",
    "TaskHistory",
    "TaskView",
    "admitted",
    "awaiting_review",
    "build_funnel_inputs",
    "canary_of",
    "check_build",
    "checked",
    "connect",
    "create_build",
    "criteria_json",
    "criteria_of",
    "dealt_to",
    "decide",
    "dropped_by",
    "edit_marks",
    "enter_round",
    "flags_of",
    "histories",
    "import_rows",
    "item_owner",
    "items_by_id",
    "mark_shown",
    "names_of",
    "new_task",
    "next_review",
    "pool_items",
    "pool_page",
    "reading",
    "release_item",
    "save_draft",
    "settings_of",
    "store_flags",
    "submit_task",
    "task_view",
    "task_views",
    "tasks_of_author",
    "tokens_of",
    "verdicts_given",
    "view_of",
    "write_revision",
]
