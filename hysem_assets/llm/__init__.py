"""Model backends behind one interface (vLLM, OpenAI-compatible servers, in-process vLLM), cached and metered."""
