"""The functions behind the ``session`` slash commands (see app.prompt.slash_commands): each
takes a CommandCall and returns the line the user sees, the same in every front-end."""

from __future__ import annotations

from app.prompt.slash_commands import CommandCall


async def compact(call: CommandCall) -> str:
    """``/compact``: summarise the conversation now, as auto-compaction would."""
    await call.loop.compact(call.session_id, model=call.model)
    return "Session compacted: the next request starts from the summary"


async def context(call: CommandCall) -> str:
    """``/context``: the next request's size by part, the total and the model's window."""
    size = await call.loop.context_size(call.session_id, model=call.model)
    return str(size.lines())


async def jobs(call: CommandCall) -> str:
    """``/jobs``: the session's background jobs with their last lines; ``/jobs stop N`` stops one."""
    from app.core.errors import OpencodeError

    table = call.loop.runtime.jobs
    words = call.arguments.split()
    if words:
        if len(words) != 2 or words[0] != "stop" or not words[1].isdigit():
            raise OpencodeError(f"Cannot read {call.arguments!r}: /jobs lists the jobs, /jobs stop N stops job N")
        job = table.get(call.session_id, int(words[1]))
        if job.running:
            await table.kill(job)
        return f"Job {job.id} ({job.command}): {job.status()}"
    listed = table.of(call.session_id)
    if not listed:
        return "No background jobs in this session"
    lines = []
    for job in listed:
        lines.append(f"{job.id}. {job.command}: {job.status()}")
        lines += [f"     {line}" for line in job.last_lines()]
    return "\n".join([*lines, "/jobs stop N stops job N"])
