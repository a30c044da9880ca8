"""A minimal, fast OpenAI-compatible server for throughput benchmarks: asyncio, keep-alive, one fixed answer.

The test server (``tests/support/openai_server.py``) starts a thread per connection and records every request, so it
is the bottleneck long before the client; this one answers ``/v1/models`` and ``/v1/chat/completions`` straight from
the event loop. Prints ``PORT <n>`` once listening.

Usage: ``python bench/fast_chat_server.py [--port N] [--latency-ms MS]`` (a completion answered after ``MS``
milliseconds, as a model server that takes time, without a thread per request)
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json

MODELS = json.dumps({"object": "list", "data": [{"id": "local-model", "object": "model"}]}).encode()
COMPLETION = json.dumps({
    "id": "c", "object": "chat.completion", "model": "local-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}).encode()


def response(body: bytes) -> bytes:
    """An HTTP/1.1 200 with a JSON body, keeping the connection open."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n" + body)


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency_s: float = 0.0
                           ) -> None:
    """Answer requests on one connection until the client closes it, each completion after ``latency_s``."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            if latency_s and not head.startswith(b"GET"):
                await asyncio.sleep(latency_s)
            writer.write(response(MODELS if head.startswith(b"GET") else COMPLETION))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        pass
    finally:
        writer.close()


async def main(port: int, latency_s: float) -> None:
    """Listen on 127.0.0.1:``port`` (0: a free port) forever."""
    server = await asyncio.start_server(functools.partial(serve_connection, latency_s=latency_s), "127.0.0.1", port,
                                        backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(main(args.port, args.latency_ms / 1000))
