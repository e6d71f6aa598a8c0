"""skills_list, skill_view and skill_manage: names, schemas, toolset (`skills`) and result
shapes as in Hermes 0.19 (tools/skills_tool.py, tools/skill_manager_tool.py).

Skills are found and read by the core (core.skills): never through a symbolic link, every
read bounded. skill_manage's writes are judged before they run as a write_file's are
(core.policy.gate): outside the working directory, and so in `$HERMES_HOME/skills`, a
person approves each one; a session with no one to ask is refused.

Left out, as hermes-tui has no use for them: plugin skills (`plugin:skill`), Hermes's
curator and its usage counts, the security scan of agent-made skills, the legacy flat
`<name>.md` skills, and the template rendering of a SKILL.md. Patches match exactly (the
patch tool's rule) where Hermes also tries fuzzy matches.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from workbench.builtins.api import (
    atomic_write_text,
    default_file_mode,
    patched,
    registry,
    skill_store,
    tool_error,
)

SkillError = skill_store.SkillError
Skill = skill_store.Skill

SKILLS_LIST_SCHEMA = {
    "description": (
        "List available skills (name + description). Use skill_view(name) to load full content."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "category": {
                "type": "string",
                "description": "Optional category filter to narrow results",
            }
        },
        "required": [],
    },
}

SKILL_VIEW_SCHEMA = {
    "description": (
        "Load a skill's full instructions (its SKILL.md) or one of its linked files "
        "(references, templates, scripts, assets). The first call returns SKILL.md and a "
        "'linked_files' dict; call again with file_path to read one of those."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "The skill name (use skills_list to see available skills)",
            },
            "file_path": {
                "type": "string",
                "description": (
                    "OPTIONAL: a linked file within the skill (e.g. 'references/api.md'). "
                    "Omit to get SKILL.md."
                ),
            },
        },
        "required": ["name"],
    },
}

SKILL_MANAGE_SCHEMA = {
    "description": (
        "Manage skills (create, update, delete): reusable procedures kept as SKILL.md files. "
        "New skills go to $HERMES_HOME/skills/; existing ones are changed where they are. "
        "Actions: create (full SKILL.md + optional category), patch (old_string/new_string, "
        "preferred for fixes), edit (full SKILL.md rewrite), delete, write_file and "
        "remove_file (supporting files under references/, templates/, scripts/, assets/). "
        "A SKILL.md starts with YAML frontmatter holding name and description. Confirm "
        "with the user before creating or deleting."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": list(skill_store.WRITE_ACTIONS),
                "description": "The action to perform.",
            },
            "name": {
                "type": "string",
                "description": (
                    "Skill name (lowercase, hyphens/underscores, max 64 chars). Must match "
                    "an existing skill for patch/edit/delete/write_file/remove_file."
                ),
            },
            "content": {
                "type": "string",
                "description": (
                    "Full SKILL.md content (YAML frontmatter + markdown body). Required for "
                    "'create' and 'edit'."
                ),
            },
            "old_string": {
                "type": "string",
                "description": "Text to find (required for 'patch'); unique unless replace_all.",
            },
            "new_string": {
                "type": "string",
                "description": "Replacement text (required for 'patch'); '' deletes.",
            },
            "replace_all": {
                "type": "boolean",
                "description": "For 'patch': replace every occurrence (default: false).",
            },
            "category": {
                "type": "string",
                "description": "Optional category folder for 'create' (e.g. 'devops').",
            },
            "file_path": {
                "type": "string",
                "description": (
                    "A supporting file within the skill: required for 'write_file' and "
                    "'remove_file' (under references/, templates/, scripts/ or assets/); "
                    "for 'patch', optional (default SKILL.md)."
                ),
            },
            "file_content": {
                "type": "string",
                "description": "Content for the file. Required for 'write_file'.",
            },
            "absorbed_into": {
                "type": "string",
                "description": (
                    "For 'delete' only: the skill this one was merged into (it must exist), "
                    "or '' when it is pruned."
                ),
            },
        },
        "required": ["action", "name"],
    },
}

LIST_HINT = "Use skill_view(name) to see full content, tags, and linked files"
VIEW_HINT = (
    "To view linked files, call skill_view(name, file_path) where file_path is e.g. "
    "'references/api.md' or 'assets/config.yaml'"
)
TEMPLATE_EXTS = (".md", ".py", ".yaml", ".yml", ".json", ".tex", ".sh")
SCRIPT_EXTS = (".py", ".sh", ".bash", ".js", ".ts", ".rb")


def _dump(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _failed(error: str, **extra: Any) -> str:
    return _dump({"success": False, "error": error, **extra})


# -- skills_list ---------------------------------------------------------------------------


def skills_list(args: dict[str, Any], **kw: Any) -> str:
    config = skill_store.current_config()
    listing = skill_store.discover(config)
    found = listing.loadable(skill_store.disabled(config))
    category = args.get("category")
    if category:
        found = [s for s in found if s.category == category]
    found.sort(key=lambda s: (s.category or "", s.name))
    refused = [{"path": str(s.directory), "reason": s.problem} for s in listing.skills if s.problem]
    payload: dict[str, Any] = {
        "success": True,
        "skills": [
            {"name": s.name, "description": s.description, "category": s.category} for s in found
        ],
        "categories": sorted({s.category for s in found if s.category}),
    }
    if not found:
        local = skill_store.local_root(config)
        payload["message"] = f"No skills found in {local.path}/ (nor in skills.external_dirs)."
    else:
        payload["count"] = len(found)
        payload["hint"] = LIST_HINT
    if refused:  # never followed or read, and why: a link out of the folder, a 5 MB file
        payload["not_loaded"] = refused
    if listing.truncated:
        payload["truncated"] = f"only the first {skill_store.MAX_SKILLS} skills were read"
    return _dump(payload)


# -- skill_view ----------------------------------------------------------------------------


def skill_view(args: dict[str, Any], **kw: Any) -> str:
    name = args.get("name")
    problem = skill_store.lookup_problem(name)
    if problem:
        return _failed(
            problem, hint="Use a skill name or relative path within the skills directory."
        )
    assert isinstance(name, str)
    config = skill_store.current_config()
    listing = skill_store.discover(config)
    matches = skill_store.find(listing, name)
    if len(matches) > 1:
        return _failed(
            f"Ambiguous skill name '{name}': {len(matches)} skills match across your local "
            "skills dir and external_dirs. Refusing to guess — load one explicitly by its "
            "categorized path.",
            matches=[str(s.skill_md) for s in matches],
            hint="Pass the full relative path instead of the bare name (e.g. 'category/skill').",
        )
    if not matches:
        available = [s.name for s in listing.loadable()[:20]]
        return _failed(
            f"Skill '{name}' not found.",
            available_skills=available,
            hint="Use skills_list to see all available skills",
        )
    skill = matches[0]
    if skill.problem:
        return _failed(f"Skill '{name}' cannot be loaded: {skill.problem}")
    if not skill.platform_ok:
        return _failed(
            f"Skill '{name}' is not supported on this platform.", readiness_status="unsupported"
        )
    if skill.name in skill_store.disabled(config):
        return _failed(
            f"Skill '{skill.name}' is disabled (skills.disabled in config.yaml); inspect "
            "the files directly on disk."
        )
    file_path = args.get("file_path")
    if file_path:
        return _view_file(skill, str(file_path), name)
    try:
        content = skill_store.read_bytes(skill.root, skill.skill_md).decode("utf-8")
    except SkillError as exc:
        return _failed(f"Failed to read skill '{name}': {exc}")
    except UnicodeDecodeError as exc:
        return _failed(f"Failed to read skill '{name}': not UTF-8 text ({exc.reason})")
    meta, _ = skill_store.parse_frontmatter(content)
    return _dump(_view_result(skill, meta, content))


def _view_result(skill: Skill, meta: dict[str, Any], content: str) -> dict[str, Any]:
    hermes = (
        meta.get("metadata", {}).get("hermes") if isinstance(meta.get("metadata"), dict) else {}
    )
    hermes = hermes if isinstance(hermes, dict) else {}
    linked = _linked_files(skill)
    required = _required_env(meta)
    missing = [
        e["name"] for e in required if not e.get("optional") and not os.environ.get(e["name"])
    ]
    rel = skill.rel
    result: dict[str, Any] = {
        "success": True,
        "name": str(meta.get("name") or skill.directory.name),
        "description": meta.get("description", ""),
        "tags": skill_store.tags(hermes.get("tags") or meta.get("tags")),
        "related_skills": skill_store.tags(
            hermes.get("related_skills") or meta.get("related_skills")
        ),
        "content": content,
        "path": f"{rel}/{skill_store.SKILL_FILE}"
        if skill.root.local
        else f"{skill.directory.name}/{skill_store.SKILL_FILE}",
        "skill_dir": str(skill.directory),
        "linked_files": linked or None,
        "usage_hint": VIEW_HINT if linked else None,
        "required_environment_variables": required,
        "required_commands": [],
        "missing_required_environment_variables": missing,
        "missing_credential_files": [],
        "missing_required_commands": [],
        "setup_needed": bool(missing),
        "setup_skipped": False,
        "readiness_status": "setup_needed" if missing else "available",
    }
    if not skill.frontmatter:
        result["frontmatter"] = None  # said, so a model or a person knows the name is its folder's
    if meta.get("compatibility"):
        result["compatibility"] = meta["compatibility"]
    if isinstance(meta.get("metadata"), dict):
        result["metadata"] = meta["metadata"]
    return result


def _required_env(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """`required_environment_variables` and the legacy `prerequisites.env_vars`, by name."""
    raw = meta.get("required_environment_variables")
    items = [raw] if isinstance(raw, dict | str) else raw if isinstance(raw, list) else []
    prereqs = meta.get("prerequisites")
    if isinstance(prereqs, dict):
        legacy = prereqs.get("env_vars")
        items += [legacy] if isinstance(legacy, str) else legacy if isinstance(legacy, list) else []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in items:
        entry = item if isinstance(item, dict) else {"name": item}
        name = str(entry.get("name") or entry.get("env_var") or "").strip()
        if not name or name in seen or not name.replace("_", "a").isalnum() or name[0].isdigit():
            continue
        seen.add(name)
        one: dict[str, Any] = {
            "name": name,
            "prompt": str(entry.get("prompt") or f"Enter value for {name}"),
        }
        if entry.get("optional"):
            one["optional"] = True
        out.append(one)
    return out


def _linked_files(skill: Skill) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for rel in skill_store.files_of(skill):
        top, _, rest = rel.partition("/")
        if not rest:
            continue
        if top == "references" and "/" not in rest and rel.endswith(".md"):
            groups.setdefault("references", []).append(rel)
        elif top == "templates" and rel.endswith(TEMPLATE_EXTS):
            groups.setdefault("templates", []).append(rel)
        elif top == "assets":
            groups.setdefault("assets", []).append(rel)
        elif top == "scripts" and "/" not in rest and rel.endswith(SCRIPT_EXTS):
            groups.setdefault("scripts", []).append(rel)
    return groups


def _view_file(skill: Skill, file_path: str, name: str) -> str:
    hint = "Use a relative path within the skill directory"
    parts = file_path.replace("\\", "/").split("/")
    if ".." in parts:
        return _failed("Path traversal ('..') is not allowed.", hint=hint)
    if file_path.startswith("/") or "\0" in file_path:
        return _failed(f"'{file_path}' is not a path within the skill directory.", hint=hint)
    target = skill.directory.joinpath(*[p for p in parts if p])
    if not os.path.lexists(target):
        available: dict[str, list[str]] = {}
        for rel in skill_store.files_of(skill):
            top = rel.split("/", 1)[0] if "/" in rel else ""
            group = top if top in skill_store.SUPPORT_DIRS else "other"
            if group != "other" or rel.endswith(TEMPLATE_EXTS):
                available.setdefault(group, []).append(rel)
        return _failed(
            f"File '{file_path}' not found in skill '{name}'.",
            available_files=available,
            hint="Use one of the available file paths listed above",
        )
    try:
        data = skill_store.read_bytes(skill.root, target)
    except SkillError as exc:
        return _failed(str(exc), hint=hint)
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        return _dump(
            {
                "success": True,
                "name": name,
                "file": file_path,
                "content": f"[Binary file: {target.name}, size: {len(data)} bytes]",
                "is_binary": True,
            }
        )
    return _dump(
        {
            "success": True,
            "name": name,
            "file": file_path,
            "content": content,
            "file_type": target.suffix,
        }
    )


# -- skill_manage --------------------------------------------------------------------------


def skill_manage(args: dict[str, Any], **kw: Any) -> str:
    action, name = args.get("action", ""), args.get("name", "")
    content, file_path = args.get("content"), args.get("file_path")
    if action in ("create", "edit") and not content:
        verb = (
            "the full SKILL.md text (frontmatter + body)"
            if action == "create"
            else "the full updated SKILL.md text"
        )
        return tool_error(f"content is required for '{action}'. Provide {verb}.", success=False)
    if action == "patch" and not args.get("old_string"):
        return tool_error(
            "old_string is required for 'patch'. Provide the text to find.", success=False
        )
    if action == "patch" and args.get("new_string") is None:
        return tool_error(
            "new_string is required for 'patch'. Use empty string to delete matched text.",
            success=False,
        )
    if action in ("write_file", "remove_file") and not file_path:
        return tool_error(
            f"file_path is required for '{action}'. Example: 'references/api-guide.md'",
            success=False,
        )
    if action == "write_file" and args.get("file_content") is None:
        return tool_error("file_content is required for 'write_file'.", success=False)
    actions = {
        "create": _create,
        "edit": _edit,
        "patch": _patch,
        "delete": _delete,
        "write_file": _write_file,
        "remove_file": _remove_file,
    }
    act = actions.get(str(action))
    if act is None:
        choices = ", ".join(skill_store.WRITE_ACTIONS)
        return _failed(f"Unknown action '{action}'. Use: {choices}")
    try:
        return _dump(act(str(name), args))
    except SkillError as exc:
        return _failed(str(exc))
    except OSError as exc:
        return _failed(f"{action} failed: {exc.strerror or exc}")


def _mode(skill_root: skill_store.Root) -> int:
    return 0o600 if skill_root.local else default_file_mode()


def _write(root: skill_store.Root, path: Path, text: str) -> None:
    """Write a skill's file: never through a link, never outside its skills folder; new
    folders in $HERMES_HOME/skills are private."""
    os.makedirs(root.real, mode=0o700, exist_ok=True)
    real_path = Path(root.real) / os.path.relpath(path, root.real)
    problem = skill_store.no_link_below(root.real, real_path)
    if problem:
        raise SkillError(problem)
    real_path.parent.mkdir(mode=0o700 if root.local else 0o777, parents=True, exist_ok=True)
    problem = skill_store.no_link_below(root.real, real_path)  # again, once made
    if problem:
        raise SkillError(problem)
    atomic_write_text(real_path, text, mode=_mode(root))


def _existing(name: str) -> Skill:
    skill = skill_store.find_to_manage(skill_store.discover(), name)
    if skill is None:
        raise SkillError(f"Skill '{name}' not found. Use skills_list() to see available skills.")
    if skill.link:
        raise SkillError(f"Refusing to change skill '{name}': {skill.problem}")
    return skill


def _create(name: str, args: dict[str, Any]) -> dict[str, Any]:
    category = args.get("category") or None
    content = str(args["content"])
    problem = (
        skill_store.name_problem(name)
        or (skill_store.name_problem(category, "Category") if category is not None else "")
        or skill_store.frontmatter_problem(content)
    )
    if problem:
        return {"success": False, "error": problem}
    existing = skill_store.find_to_manage(skill_store.discover(), name)
    if existing is not None:
        return {
            "success": False,
            "error": f"A skill named '{name}' already exists at {existing.directory}.",
        }
    root = skill_store.local_root()
    rel = Path(str(category), name) if category else Path(name)
    skill_md = Path(root.real, rel, skill_store.SKILL_FILE)
    if os.path.lexists(skill_md.parent):
        return {"success": False, "error": f"{skill_md.parent} already exists and holds no skill."}
    _write(root, skill_md, content)
    result: dict[str, Any] = {
        "success": True,
        "message": f"Skill '{name}' created.",
        "path": str(rel),
        "skill_md": str(skill_md),
    }
    if category:
        result["category"] = category
    result["hint"] = (
        "To add reference files, templates, or scripts, use skill_manage(action='write_file', "
        f"name='{name}', file_path='references/example.md', file_content='...')"
    )
    return result


def _edit(name: str, args: dict[str, Any]) -> dict[str, Any]:
    content = str(args["content"])
    problem = skill_store.frontmatter_problem(content)
    if problem:
        return {"success": False, "error": problem}
    skill = _existing(name)
    _write(skill.root, skill.skill_md, content)
    return {
        "success": True,
        "message": f"Skill '{name}' updated (full rewrite).",
        "path": str(skill.directory),
    }


def _patch(name: str, args: dict[str, Any]) -> dict[str, Any]:
    skill = _existing(name)
    file_path = args.get("file_path")
    if file_path:
        problem = skill_store.file_path_problem(file_path)
        if problem:
            return {"success": False, "error": problem}
        target = skill_store.supporting(skill, str(file_path))
    else:
        target = skill.skill_md
    label = str(file_path) if file_path else skill_store.SKILL_FILE
    if not os.path.lexists(target):
        return {"success": False, "error": f"File not found: {label}"}
    try:
        text = skill_store.read_bytes(skill.root, target).decode("utf-8")
    except UnicodeDecodeError:
        return {"success": False, "error": f"{label} is not UTF-8 text: patch edits text only"}
    change = patched(text, args, Path(label))
    if isinstance(change, str):
        error = json.loads(change).get("error", change)
        preview = text[:500] + ("..." if len(text) > 500 else "")
        return {"success": False, "error": error, "file_preview": preview}
    updated, count = change
    if len(updated) > skill_store.MAX_SKILL_CONTENT_CHARS:
        return {
            "success": False,
            "error": f"{label} content is {len(updated):,} characters (limit: {skill_store.MAX_SKILL_CONTENT_CHARS:,}).",
        }
    if target == skill.skill_md:
        problem = skill_store.frontmatter_problem(updated)
        if problem:
            return {"success": False, "error": f"Patch would break SKILL.md structure: {problem}"}
    _write(skill.root, target, updated)
    replacements = count if args.get("replace_all") else 1
    plural = "s" if replacements > 1 else ""
    return {
        "success": True,
        "message": f"Patched {label} in skill '{name}' ({replacements} replacement{plural}).",
    }


def _delete(name: str, args: dict[str, Any]) -> dict[str, Any]:
    absorbed = str(args.get("absorbed_into") or "").strip()
    if absorbed == name:
        return {
            "success": False,
            "error": f"absorbed_into='{absorbed}' cannot equal the skill being deleted.",
        }
    listing = skill_store.discover()
    if absorbed and skill_store.find_to_manage(listing, absorbed) is None:
        return {
            "success": False,
            "error": f"absorbed_into='{absorbed}' does not exist. Create or patch the umbrella skill first, then retry the delete.",
        }
    skill = _existing(name)
    directory = skill.directory
    real = os.path.realpath(directory)
    if os.path.islink(directory) or real != str(directory) or real == skill.root.real:
        return {
            "success": False,
            "error": f"Refusing to delete '{directory}': not a skill folder inside {skill.root.real}.",
        }
    problem = skill_store.no_link_below(skill.root.real, directory)
    if problem:
        return {"success": False, "error": f"Refusing to delete '{directory}': {problem}"}
    shutil.rmtree(directory)
    parent = directory.parent
    if str(parent) != skill.root.real and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()  # its category, now empty
    message = f"Skill '{name}' deleted."
    if absorbed:
        message += f" Content absorbed into '{absorbed}'."
    return {"success": True, "message": message}


def _write_file(name: str, args: dict[str, Any]) -> dict[str, Any]:
    file_path, content = str(args["file_path"]), str(args["file_content"])
    problem = skill_store.file_path_problem(file_path)
    if problem:
        return {"success": False, "error": problem}
    size = len(content.encode("utf-8"))
    if size > skill_store.MAX_SKILL_FILE_BYTES:
        return {
            "success": False,
            "error": f"File content is {size:,} bytes (limit: {skill_store.MAX_SKILL_FILE_BYTES:,} bytes / 1 MiB). Consider splitting into smaller files.",
        }
    skill = _existing(name)
    target = skill_store.supporting(skill, file_path)
    if target == skill.skill_md:
        problem = skill_store.frontmatter_problem(content)
        if problem:
            return {"success": False, "error": problem}
    _write(skill.root, target, content)
    return {
        "success": True,
        "message": f"File '{file_path}' written to skill '{name}'.",
        "path": str(target),
    }


def _remove_file(name: str, args: dict[str, Any]) -> dict[str, Any]:
    file_path = str(args["file_path"])
    problem = skill_store.file_path_problem(file_path)
    if problem:
        return {"success": False, "error": problem}
    skill = _existing(name)
    target = skill_store.supporting(skill, file_path)
    if target == skill.skill_md:
        return {"success": False, "error": "SKILL.md cannot be removed; delete the skill instead."}
    if not os.path.lexists(target):
        available = [
            f for f in skill_store.files_of(skill) if f.split("/", 1)[0] in skill_store.SUPPORT_DIRS
        ]
        return {
            "success": False,
            "error": f"File '{file_path}' not found in skill '{name}'.",
            "available_files": available or None,
        }
    problem = skill_store.no_link_below(skill.root.real, target.parent)
    if problem:
        raise SkillError(problem)
    target.unlink()  # a link itself is removed, never what it leads to
    parent = target.parent
    if parent != skill.directory and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
    return {"success": True, "message": f"File '{file_path}' removed from skill '{name}'."}


registry.register(
    "skills_list", "skills", SKILLS_LIST_SCHEMA, skills_list, emoji="📚", parallel_safe=True
)
registry.register(
    "skill_view", "skills", SKILL_VIEW_SCHEMA, skill_view, emoji="📚", parallel_safe=True
)
registry.register("skill_manage", "skills", SKILL_MANAGE_SCHEMA, skill_manage, emoji="📝")
