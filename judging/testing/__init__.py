"""Test helpers that ship with judging: a local OpenAI-compatible server (`judging.testing.fake_openai`)."""
