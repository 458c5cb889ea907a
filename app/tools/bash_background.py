"""bash's background jobs (app/tools/jobs.py) as the model meets them: ``bash`` with
``background: true`` starts one, ``bash_output`` reads what it printed since the last
read, ``bash_kill`` stops it. Jobs belong to the session that started them."""

from __future__ import annotations

from functools import partial

from pydantic import Field

from app.core.errors import ToolError
from app.permission.shell.sandbox_plan import BashPlan
from app.sandbox.refusals import refusal_note
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.jobs import Job, JobTable


async def start_job(ctx: ToolContext, decided: BashPlan, command: str, title: str) -> ToolResult:
    """Start ``command`` as a background job of the session, run as ``decided`` says (in
    the sandbox when it is one): judged already, as any bash call."""
    from app.tools.bash import shell_launch

    job = await _jobs(ctx).start(partial(shell_launch, ctx, decided), ctx.workspace.root, ctx.session_id, command)
    return ToolResult(
        output=(
            f"Started in the background as job {job.id}: it runs while you go on. "
            f"Read its output with bash_output (job_id {job.id}); stop it with bash_kill."
        ),
        title=title,
        metadata={
            "command": command, "job_id": job.id, "pgid": job.pgid, "background": True, "log": str(job.log),
            "sandbox": job.launch.mechanism,
        },  # fmt: skip
    )


class JobParams(ToolParams):
    job_id: int = Field(gt=0, description="The job's id, as bash returned it")


class BashOutputTool(Tool):
    name = "bash_output"
    params = JobParams
    description = tool_description("bash_output")
    read_only = True

    async def run(self, params: JobParams, ctx: ToolContext) -> ToolResult:
        job = _jobs(ctx).get(ctx.session_id, params.job_id)
        output = job.output.unread()
        return _report(job, output or "(no new output)", f"Output of job {job.id}")


class BashKillTool(Tool):
    name = "bash_kill"
    params = JobParams
    description = tool_description("bash_kill")

    async def run(self, params: JobParams, ctx: ToolContext) -> ToolResult:
        jobs = _jobs(ctx)
        job = jobs.get(ctx.session_id, params.job_id)
        if job.running:
            await jobs.kill(job)
        output = job.output.unread()
        return _report(job, output or "(no new output)", f"Stop job {job.id}")


def _report(job: Job, output: str, title: str) -> ToolResult:
    """The new output, what the sandbox refused in it (as bash says it), and the status."""
    lines = [output.rstrip("\n"), ""]
    if job.launch.policy is not None and (note := refusal_note(job.launch.policy, output)) is not None:
        lines.append(note)
    lines.append(f"Job {job.id} ({job.command}): {job.status()}.")
    return ToolResult(
        output="\n".join(lines),
        title=title,
        metadata={"job_id": job.id, "running": job.running, "exit_code": job.exit_code},
    )


def _jobs(ctx: ToolContext) -> JobTable:
    if ctx.jobs is None:
        raise ToolError("background jobs are not available here: run the command without background")
    return ctx.jobs
