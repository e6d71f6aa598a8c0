"""Built-in skills tools: skills_list, skill_view, skill_manage over Hermes's skills folders."""
