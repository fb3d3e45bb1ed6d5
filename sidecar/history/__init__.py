"""Prompt history across sessions (oh-my-pi's HistoryStorage): add, search, list."""

from .store import MAX_PROMPT_CHARS, HistoryUnavailable, Prompt, PromptHistory

__all__ = ["MAX_PROMPT_CHARS", "HistoryUnavailable", "Prompt", "PromptHistory"]
