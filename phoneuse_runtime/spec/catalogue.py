"""The catalogue `phoneuse-runtime actions` prints: what a registry serves on a device with some
capabilities, as text or JSON (each action's params and result schemas)."""

from __future__ import annotations

from typing import Any

from phoneuse_runtime.kernel.registry import AnyActionSpec, Registry


def _can(requires: frozenset[str], capabilities: frozenset[str]) -> bool:
    return requires <= capabilities


def _params_schema(spec: AnyActionSpec) -> dict[str, Any]:
    """The params' JSON schema; a settling action's has `settle_ms` too (its result, the
    settle fields: see the spec's Settling section)."""
    schema: dict[str, Any] = spec.params.model_json_schema(by_alias=True)
    if spec.settles:
        from phoneuse_runtime.screen.settle import SettleParams

        schema.setdefault("properties", {}).update(SettleParams.model_json_schema()["properties"])
    return schema


def catalogue(registry: Registry, *, device: str, capabilities: frozenset[str]) -> dict[str, Any]:
    """Actions and queries as JSON, for `phoneuse-runtime actions --json`."""
    return {
        "device": device,
        "capabilities": sorted(capabilities),
        "actions": {
            name: {
                "summary": spec.summary,
                "requires": sorted(spec.requires),
                "supported": _can(spec.requires, capabilities),
                "params": _params_schema(spec),
                "result": spec.result.model_json_schema(by_alias=True, mode="serialization"),
                "origin": registry.origins.get(name, ""),
            }
            for name, spec in sorted(registry.actions.items())
        },
        "queries": {
            name: {
                "summary": spec.summary,
                "requires": sorted(spec.requires),
                "supported": _can(spec.requires, capabilities),
                "filters": spec.filters.model_json_schema(by_alias=True),
                "result": spec.result.model_json_schema(by_alias=True, mode="serialization"),
            }
            for name, spec in sorted(registry.queries.items())
        },
        "events": {
            name: {
                "summary": (payload.__doc__ or "").strip().split("\n\n")[0],
                "payload": payload.model_json_schema(by_alias=True, mode="serialization"),
                "origin": registry.origins.get(f"event {name}", ""),
            }
            for name, payload in sorted(registry.events.items())
        },
        "load_errors": registry.load_errors,
    }


def render_catalogue_text(registry: Registry, *, device: str, capabilities: frozenset[str]) -> str:
    lines = [f"Actions on device {device} (capabilities: {', '.join(sorted(capabilities)) or 'none'}):"]
    for name, spec in sorted(registry.actions.items()):
        keys = ", ".join(
            (info.alias or key) + ("" if info.is_required() else "?")
            for key, info in spec.params.model_fields.items()
        )
        if spec.settles:
            keys += ", settle_ms?"
        missing = sorted(spec.requires - capabilities)
        mark = " " if not missing else "-"
        lines.append(f"{mark} {name:<22} {spec.summary}")
        lines.append(f"  {'':<22} params: {keys or '(none)'}")
        if missing:
            lines.append(f"  {'':<22} UNSUPPORTED here: needs {', '.join(missing)}")
    lines.append("Queries:")
    for name, qspec in sorted(registry.queries.items()):
        keys = ", ".join([*qspec.filters.model_fields, "offset"])
        missing = sorted(qspec.requires - capabilities)
        mark = " " if not missing else "-"
        lines.append(f"{mark} {name:<22} {qspec.summary}; filters: {keys}")
        if missing:
            lines.append(f"  {'':<22} UNSUPPORTED here: needs {', '.join(missing)}")
    lines.append("Events (subscribe names any of these; none means all):")
    lines += [f"  {name}" for name in sorted(registry.events)]
    for err in registry.load_errors:
        lines.append(f"plug-in failed to load: {err}")
    return "\n".join(lines)
