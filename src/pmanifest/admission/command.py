"""``pmanifest export admission``: options in, the YAML stream out (the CLI prints it)."""

from __future__ import annotations

from pmanifest.admission.export import ExportOptions, render


def export_admission(profile_name: str | None, config_path: str | None, action: str) -> str:
    """The policies for ``--profile`` (else the config's, else the default profile) with the
    config's roles, rule levels (a rule turned off is not exported) and suppression setting.
    ConfigError for an unknown profile or a broken config."""
    from pmanifest.catalogue import builtin
    from pmanifest.kube.profile import DEFAULT_PROFILE
    from pmanifest.lint.config import config_from, resolve_profile

    config = config_from(config_path)
    profile = resolve_profile(profile_name or config.profile or DEFAULT_PROFILE, config)
    off = frozenset(rule_id for rule_id, level in config.rules.items() if level == "off")
    options = ExportOptions(profile, action, config.roles, off, config.inline_suppressions)
    return render(builtin(), options)
