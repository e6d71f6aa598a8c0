"""Hermes 0.19.0's stock toolsets (its `toolsets.py`): every name a config Hermes wrote may use.

Each is (tools, includes). hermes-tui has the tools of some of them (core.tools.toolsets
defines those in its own words); the others name tools it does not have, so a config that
lists them offers nothing more here, and `doctor` says so once instead of calling them
unknown. The platform bundles (`hermes-cli`, `hermes-telegram`, ...) are Hermes's shared list
of core tools, with a platform's own tools added (`hermes-discord`'s discord tools, ...).
"""

from __future__ import annotations

Definition = tuple[tuple[str, ...], tuple[str, ...]]  # (tools, includes)

_LEAVES: dict[str, tuple[str, ...]] = {
    "web": ("web_search", "web_extract"),
    "search": ("web_search",),
    "x_search": ("x_search",),
    "vision": ("vision_analyze",),
    "video": ("video_analyze",),
    "image_gen": ("image_generate",),
    "video_gen": ("video_generate", "xai_video_edit", "xai_video_extend"),
    "computer_use": ("computer_use",),
    "terminal": ("terminal", "process"),
    "skills": ("skills_list", "skill_view", "skill_manage"),
    "browser": (
        "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
        "browser_scroll", "browser_back", "browser_press", "browser_get_images",
        "browser_vision", "browser_console", "browser_cdp", "browser_dialog", "web_search",
    ),
    "cronjob": ("cronjob",),
    "file": ("read_file", "write_file", "patch", "search_files"),
    "tts": ("text_to_speech",),
    "todo": ("todo",),
    "memory": ("memory",),
    "context_engine": (),  # the active context engine's tools, none of them static
    "session_search": ("session_search",),
    "project": ("project_list", "project_create", "project_switch"),
    "clarify": ("clarify",),
    "code_execution": ("execute_code",),
    "delegation": ("delegate_task",),
    "homeassistant": ("ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"),
    "kanban": (
        "kanban_show", "kanban_list", "kanban_complete", "kanban_block", "kanban_heartbeat",
        "kanban_comment", "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach",
        "kanban_attach_url", "kanban_attachments",
    ),
    "discord": ("discord",),
    "discord_admin": ("discord_admin",),
    "yuanbao": (
        "yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker",
        "yb_send_sticker",
    ),
    "feishu_doc": ("feishu_doc_read",),
    "feishu_drive": (
        "feishu_drive_list_comments", "feishu_drive_list_comment_replies",
        "feishu_drive_reply_comment", "feishu_drive_add_comment",
    ),
    "spotify": (
        "spotify_playback", "spotify_devices", "spotify_queue", "spotify_search",
        "spotify_playlists", "spotify_albums", "spotify_library",
    ),
}  # fmt: skip


LEAVES = frozenset(_LEAVES)  # the toolsets of tools, as opposed to the composites


def _tools(*toolsets: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tool for name in toolsets for tool in _LEAVES[name]))


# Hermes's `_HERMES_CORE_TOOLS`: what every platform bundle offers.
_CORE_SETS = (
    "web", "terminal", "file", "vision", "image_gen", "skills", "browser", "tts", "todo",
    "memory", "session_search", "clarify", "code_execution", "delegation", "cronjob",
    "homeassistant", "kanban", "computer_use",
)  # fmt: skip
CORE_TOOLS = frozenset({*_tools(*_CORE_SETS), "read_terminal", "close_terminal"})
_NOT_CODING = {*_tools("image_gen", "tts", "cronjob", "homeassistant", "kanban", "computer_use")}
_CODING = tuple(sorted(CORE_TOOLS - _NOT_CODING))
_NOT_API = {"read_terminal", "close_terminal", *_tools("tts", "clarify", "kanban", "computer_use")}
_BUNDLE_EXTRAS: dict[str, tuple[str, ...]] = {
    "cli": (), "cron": (), "telegram": (), "discord": ("discord", "discord_admin"),
    "whatsapp": (), "slack": (), "signal": (), "bluebubbles": (), "homeassistant": (),
    "email": (), "mattermost": (), "matrix": (), "dingtalk": (),
    "feishu": _tools("feishu_doc", "feishu_drive"), "weixin": (), "qqbot": (), "wecom": (),
    "wecom-callback": (), "yuanbao": _tools("yuanbao"), "sms": (),
}  # fmt: skip
_GATEWAY = (
    "telegram", "discord", "whatsapp", "slack", "signal", "bluebubbles", "homeassistant",
    "email", "sms", "mattermost", "matrix", "dingtalk", "feishu", "wecom", "wecom-callback",
    "weixin", "qqbot", "webhook", "yuanbao",
)  # fmt: skip

STOCK: dict[str, Definition] = {
    **{name: (tools, ()) for name, tools in _LEAVES.items()},
    "debugging": (("terminal", "process"), ("web", "file")),
    "safe": ((), ("web", "vision", "image_gen")),
    "coding": (_CODING, ()),
    "hermes-acp": (
        tuple(sorted(set(_CODING) - {"read_terminal", "close_terminal", "clarify"})),
        (),
    ),
    "hermes-api-server": (tuple(sorted(CORE_TOOLS - _NOT_API)), ()),
    **{
        f"hermes-{platform}": (tuple(sorted(CORE_TOOLS | set(extras))), ())
        for platform, extras in _BUNDLE_EXTRAS.items()
    },
    "hermes-webhook": (("web_search", "web_extract", "vision_analyze", "clarify"), ()),
    "hermes-gateway": ((), tuple(f"hermes-{platform}" for platform in _GATEWAY)),
}

# Toolsets whose disabling takes away only their tools beyond the core ones (Hermes's rule
# for the platform bundles and the `coding` posture: disabling one never empties the list).
POSTURES = frozenset({"coding"})


def subtracts_core(name: str) -> bool:
    """A disabled toolset that takes away only its tools beyond Hermes's core ones."""
    return name.startswith("hermes-") or name in POSTURES
