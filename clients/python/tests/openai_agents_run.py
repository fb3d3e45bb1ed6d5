"""A real ``Runner.run`` of the OpenAI Agents SDK with a scripted model: one turn, in its own process.

    python -m tests.openai_agents_run (sidecar|sqlite) STORE SESSION_ID PROMPT OUT.json

Every call of the model is answered from a script keyed by the prompt (a tool call first,
then text after the tool's output); what the model was given each time is written to
OUT.json with the run's final output. ``sidecar``: the session is a ``SidecarSession``
spawning a sidecar on the sessions root STORE (``$SESSION_SIDECAR_TEST_COMMAND`` or this
interpreter's ``-m sidecar``); ``sqlite``: the SDK's ``SQLiteSession`` on the file STORE.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, ModelResponse, Runner, SQLiteSession, Usage, function_tool
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}, 21 degrees"


class ScriptedModel(Model):
    """Answers with a tool call when the last input is a user message, with text after a tool's output."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []
        self.calls = 0

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        self.calls += 1
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        last = items[-1]
        n = len(items)  # ids unique over the whole history, across processes
        if last.get("type") == "function_call_output":
            output: list[Any] = [
                ResponseOutputMessage(
                    id=f"msg_{n}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=f"It is {last['output']}.", annotations=[])],
                )
            ]
        else:
            city = "Lyon" if "Lyon" in str(last.get("content")) else "Paris"
            output = [
                ResponseFunctionToolCall(
                    id=f"fc_{n}",
                    type="function_call",
                    call_id=f"call_{n}",
                    name="get_weather",
                    arguments=json.dumps({"city": city}),
                    status="completed",
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=f"resp_{n}")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


async def run(kind: str, store: str, session_id: str, prompt: str) -> dict[str, Any]:
    model = ScriptedModel()
    agent = Agent(name="weather", instructions="Answer about the weather.", model=model, tools=[get_weather])
    if kind == "sqlite":
        session: Any = SQLiteSession(session_id, store)
    else:
        from session_sidecar_client.adapters.openai_agents import SidecarSession

        from .paths import sidecar_command

        session = SidecarSession(session_id, root=store, command=sidecar_command())
    try:
        result = await Runner.run(agent, prompt, session=session)
        history = await session.get_items()
    finally:
        if kind == "sqlite":
            session.close()
        else:
            await session.close()
    return {"final": result.final_output, "inputs": model.inputs, "history": history}


def main() -> None:
    kind, store, session_id, prompt, out = sys.argv[1:6]
    answer = asyncio.run(run(kind, store, session_id, prompt))
    with open(out, "w") as file:
        json.dump(answer, file)


if __name__ == "__main__":
    main()
