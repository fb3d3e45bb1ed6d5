"""The generated types and methods are what protocol/schema.json says: a protocol change the client misses fails here."""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import subprocess
import sys
import typing
from pathlib import Path

import session_sidecar_client
from session_sidecar_client import SidecarClient, protocol
from session_sidecar_client.errors import RpcError
from session_sidecar_client.methods import SidecarMethods

from .paths import REPO, SCHEMA_PATH

GENERATOR = REPO / "clients" / "python" / "generate.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("session_sidecar_client_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_regenerating_gives_the_committed_bytes():
    generator = load_generator()
    outputs = generator.outputs(SCHEMA_PATH)
    assert {path.name for path in outputs} == {"protocol.py", "methods.py"}
    for path, text in outputs.items():
        assert path.read_bytes() == text.encode("utf-8"), f"{path.name} is stale: run python clients/python/generate.py"


def test_the_generator_check_mode_catches_a_schema_change(tmp_path: Path):
    changed = schema()
    changed["$defs"]["CreateParams"]["properties"]["color"] = {"type": "string"}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(changed))
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--check", "--schema", str(path)], capture_output=True, text=True
    )
    assert (
        run.returncode == 1 and "protocol.py is out of date" in run.stderr and "methods.py is out of date" in run.stderr
    )
    ok = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def test_the_generated_method_for_a_new_field_takes_it(tmp_path: Path):
    # What a regenerated client would look like after a field is added: it has the keyword argument.
    changed = schema()
    changed["$defs"]["CreateParams"]["properties"]["color"] = {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
    }
    generator = load_generator()
    text = generator.generate_methods(changed)
    assert "color: str | None = None" in text and 'params["color"] = color' in text
    original = generator.generate_methods(copy.deepcopy(schema()))
    assert "color" not in original


def test_every_definition_is_a_typeddict_with_the_schema_keys():
    for name, spec in schema()["$defs"].items():
        cls = getattr(protocol, name)
        if "anyOf" in spec and "properties" not in spec:  # a tagged union: an alias of its members' TypedDicts
            members = {ref["$ref"].rsplit("/", 1)[-1] for ref in spec["anyOf"]}
            assert {m.__name__ for m in typing.get_args(cls)} == members, name
            continue
        properties = set(spec.get("properties", {}))
        assert cls.__required_keys__ == set(spec.get("required", [])), name
        assert cls.__required_keys__ | cls.__optional_keys__ == properties, name
        typing.get_type_hints(cls)  # every annotation resolves


def test_enums_are_literal_types():
    hints = typing.get_type_hints(protocol.BuildContextParams)
    assert typing.get_origin(hints["format"]) is typing.Literal
    assert typing.get_args(hints["format"]) == ("agent", "llm")
    fsync = typing.get_type_hints(protocol.StoreSettings)["fsync"]
    assert set(typing.get_args(fsync)) == {"always", "assistant", "never"}
    raw = typing.get_type_hints(protocol.BuildContextParams, include_extras=True)["format"]
    assert typing.get_origin(raw) is typing.NotRequired


def test_every_protocol_method_has_a_typed_method_with_the_schema_params():
    spec = schema()
    assert set(protocol.METHODS) == set(spec["methods"])
    assert set(protocol.PYTHON_METHODS.values()) == set(spec["methods"])
    for python_name, method in protocol.PYTHON_METHODS.items():
        function = getattr(SidecarClient, python_name)
        assert inspect.iscoroutinefunction(function), python_name
        assert function is getattr(SidecarMethods, python_name), f"{python_name} is overridden by hand"
        params_ref = spec["methods"][method]["params"].get("$ref")
        fields = set(spec["$defs"][params_ref.rsplit("/", 1)[-1]]["properties"]) if params_ref else set()
        arguments = set(inspect.signature(function).parameters) - {"self"}
        expected = {load_generator().snake(f) for f in fields - {"workDoneToken"}}
        if "workDoneToken" in fields:
            expected.add("on_progress")
        assert arguments == expected, python_name
    assert protocol.PYTHON_METHODS["close_session"] == "session/close"  # close() ends the client itself


def test_every_server_request_and_notification_has_its_option():
    from session_sidecar_client.client import SERVER_NOTIFICATIONS_HANDLED, SERVER_REQUESTS_HANDLED

    spec = schema()
    assert set(SERVER_REQUESTS_HANDLED) == set(spec["serverRequests"]) == set(protocol.SERVER_REQUESTS)
    assert set(SERVER_NOTIFICATIONS_HANDLED) == set(spec["notifications"]["serverToClient"])
    assert (
        set(protocol.CLIENT_NOTIFICATIONS)
        == set(spec["notifications"]["clientToServer"])
        == {"initialized", "exit", "$/cancelRequest"}
    )
    options = inspect.signature(SidecarClient.__init__).parameters
    for option in SERVER_REQUESTS_HANDLED.values():
        assert option in options


def test_every_error_code_has_a_class():
    errors = schema()["errors"]
    assert set(protocol.ERROR_CLASSES) == {e["code"] for e in errors}
    for entry in errors:
        cls = protocol.ERROR_CLASSES[entry["code"]]
        assert issubclass(cls, RpcError) and cls.kind_value == entry["kind"]
        error = RpcError.from_error_object(
            {"code": entry["code"], "message": "m", "data": {"kind": entry["kind"], "x": 1}}
        )
        assert (
            type(error) is cls and error.code == entry["code"] and error.kind == entry["kind"] and error.data["x"] == 1
        )
    unknown = RpcError.from_error_object({"code": -1, "message": "odd"})
    assert type(unknown) is RpcError and unknown.code == -1 and unknown.data == {}


def test_the_package_exports_the_types_and_needs_nothing_else():
    for name in (
        "SidecarClient",
        "RpcError",
        "SessionNotFoundError",
        "AppendResult",
        "ProgressValue",
        "UNSET",
        "METHODS",
    ):
        assert name in session_sidecar_client.__all__ and hasattr(session_sidecar_client, name)
    # Standalone: no import of the server package anywhere in the client.
    package = Path(session_sidecar_client.__file__).parent
    for source in package.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        assert "import sidecar" not in text and "from sidecar" not in text, source.name
    assert (package / "py.typed").exists()


def test_entries_and_messages_are_typed_with_a_constant_for_every_tag():
    shapes = schema()["$defs"]
    hints = typing.get_type_hints(protocol.BuildContextResult)
    messages = typing.get_args(typing.get_args(hints["messages"])[0])
    assert protocol.ToolResultMessage in messages and protocol.AssistantMessage in messages
    assert typing.get_type_hints(protocol.ToolResultMessage)["toolCallId"] is str
    entry_types = typing.get_args(typing.get_args(typing.get_type_hints(protocol.GetEntriesResult)["entries"])[0])
    assert protocol.MessageEntry in entry_types and protocol.CustomEntry in entry_types
    # One constant per tag of each union, per enum value of each field.
    roles = shapes["AgentMessage"]["discriminator"]["mapping"]
    assert {v for k, v in vars(protocol.AgentMessageRole).items() if not k.startswith("_")} == set(roles)
    assert protocol.AgentMessageRole.TOOL_RESULT == "toolResult"
    assert protocol.BuildContextParamsFormat.LLM == "llm"
    assert [protocol.ProgressKind.BEGIN, protocol.ProgressKind.REPORT, protocol.ProgressKind.END] == [
        "begin",
        "report",
        "end",
    ]
    assert protocol.is_known_entry({"type": "message"}) and not protocol.is_known_entry({"type": "hologram"})
