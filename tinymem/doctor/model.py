"""The configuration as tm resolves it, the provider keys the model needs, and (`--model`)
a one-token call to the model."""

from __future__ import annotations

import os
import time

from tinymem import config as cfg
from tinymem.doctor.report import FAIL, OK, SKIP, WARN, DoctorReport
from tinymem.errors import (
    ModelError,
    ModelNotFoundError,
    ModelReplyError,
    ModelTimeoutError,
    UsageError,
)
from tinymem.modelsetup import problem
from tinymem.redact import redact_url
from tinymem.repository import Repo

MODEL_TIMEOUT = 5.0
# Providers whose litellm route needs a key in the environment (local servers need none).
PROVIDER_KEYS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "azure": "AZURE_API_KEY",
}
API_KEY_VARS: tuple[str, ...] = tuple(sorted(set(PROVIDER_KEYS.values())))


def _shown(value: cfg.Value) -> str | None:
    """A setting as doctor prints and reports it: an endpoint URL without its credentials."""
    return redact_url(value.value) if value.key == "apiBase" else value.value


def check_config(
    repo: Repo | None, flags: dict[str, str | None], report: DoctorReport
) -> dict[str, cfg.Value]:
    values = cfg.resolve(repo.git if repo is not None else None, flags)
    report.config = [
        {"key": v.key, "value": _shown(v), "source": v.source} for v in values.values()
    ]
    bad: list[str] = []
    for key in cfg.NUMERIC_SETTINGS:
        try:
            cfg.as_int(values, key)
        except UsageError as exc:
            bad.append(str(exc))
    for check in (cfg.repair_rounds, cfg.memory_share):
        try:
            check(values)
        except UsageError as exc:
            bad.append(str(exc))
    shown = [
        f"{v.key} = {_shown(v) if v.value is not None else '(not set)'}  ({v.source})"
        for v in values.values()
    ]
    if bad:
        report.add(
            "config",
            FAIL,
            f"{len(bad)} setting(s) are not usable: {bad[0]}",
            "`tm config KEY VALUE` sets a valid value (or unset the TM_* environment variable)",
            bad + shown,
        )
    else:
        model = values["model"]
        base = values["apiBase"]
        report.add(
            "config",
            OK,
            f"model {model.value} ({model.source}); "
            + (
                f"apiBase {_shown(base)} ({base.source})"
                if base.value
                else "apiBase not set: the provider's default endpoint"
            ),
            None,
            shown,
        )
    return values


def check_keys(values: dict[str, cfg.Value], report: DoctorReport) -> None:
    # Only whether a key is set is ever reported: never its value, not even a prefix.
    report.api_keys = {name: "set" if os.environ.get(name) else "not set" for name in API_KEY_VARS}
    model = values["model"].value or cfg.DEFAULT_MODEL
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    needed = PROVIDER_KEYS.get(provider)
    have = [n for n, state in report.api_keys.items() if state == "set"]
    shown = [
        f"set: {', '.join(have) or 'none'}",
        f"not set: {', '.join(n for n in API_KEY_VARS if n not in have) or 'none'}",
    ]
    mistake = problem(model, values["apiBase"].value)
    if mistake is not None:
        # The same check `tm ask` makes before calling: one problem, with its fix.
        report.add("model setup", FAIL, mistake.message, mistake.fix, shown)
    elif needed and not os.environ.get(needed):
        report.add(
            "api keys",
            WARN,
            f"{needed} is not set; litellm's {provider} provider needs it"
            + (" (any value for a local OpenAI-compatible server)" if provider == "openai" else ""),
            f"export {needed}=... in your shell (tm never stores keys)",
            shown,
        )
    else:
        report.add(
            "api keys",
            OK,
            f"{', '.join(have)} set" if have else "no provider API key is set (none needed)",
            None,
            shown,
        )


def check_model(values: dict[str, cfg.Value], report: DoctorReport) -> None:
    from tinymem.llm import call, endpoint_name

    model = values["model"].value or cfg.DEFAULT_MODEL
    api_base = values["apiBase"].value
    where = endpoint_name(model, api_base)
    if problem(model, api_base) is not None:
        report.add("model", SKIP, "not called: the model setting cannot work (see above)")
        return
    try:
        context = cfg.as_int(values, "context") or 8192
    except UsageError:
        context = 8192
    started = time.monotonic()
    try:
        call(
            model,
            [{"role": "user", "content": "Reply with the single word OK."}],
            api_base=api_base,
            timeout=MODEL_TIMEOUT,
            context=context,
            max_reply_chars=4000,
        )
    except ModelError as exc:
        report.add("model", FAIL, str(exc), _model_fix(exc))
        return
    report.add(
        "model",
        OK,
        f"{model} at {where} answered in {time.monotonic() - started:.1f} s",
    )


def _model_fix(exc: ModelError) -> str:
    fixes: dict[type[ModelError], str] = {
        ModelNotFoundError: "pull or load the model on the server, or `tm config model NAME`",
        ModelTimeoutError: f"nothing came back within {MODEL_TIMEOUT:g} s: is the server still"
        " loading the model? try again, or look at the server's log",
        ModelReplyError: "the endpoint answers but not usefully: check the model name and the"
        " server's log",
    }
    for kind, fix in fixes.items():
        if isinstance(exc, kind):
            return fix
    return "start the model server, or point tm at it: `tm config apiBase URL` (or TM_API_BASE)"
