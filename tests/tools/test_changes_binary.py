"""Binary files through the change path: deleting one keeps its exact bytes in history
(spec 000: no content is ever lost), and a revert puts them back byte for byte."""

from __future__ import annotations

from app.tools.changes import Change, ChangeSet, apply_changes
from app.tools.delete import DeleteTool
from app.tools.revert import revert_file

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) + b"\x00\xff" * 50


async def test_deleting_a_folder_keeps_a_png_byte_for_byte_and_revert_restores_it(ctx, workspace, runtime, session_id):
    (workspace / "assets").mkdir()
    (workspace / "assets" / "logo.png").write_bytes(PNG)
    (workspace / "assets" / "readme.txt").write_text("logo\n")

    await DeleteTool().call({"path": "assets"}, ctx)
    assert not (workspace / "assets").exists()

    initial, deleted = runtime.store.history.versions(session_id, "assets/logo.png")
    assert initial.data == PNG and initial.content == f"(binary file, {len(PNG)} bytes)"
    assert deleted.deleted and deleted.data is None
    assert runtime.store.history.versions(session_id, "assets/readme.txt")[0].data is None

    await revert_file(ctx, "assets/logo.png")
    assert (workspace / "assets" / "logo.png").read_bytes() == PNG
    restored = runtime.store.history.versions(session_id, "assets/logo.png")[-1]
    assert (restored.version, restored.deleted, restored.data) == ("v2", False, PNG)


async def test_a_binary_file_overwritten_with_text_reverts_to_its_bytes(ctx, workspace, runtime, session_id):
    target = workspace / "blob.bin"
    target.write_bytes(PNG)

    def plan(snapshot):
        return ChangeSet(changes=[Change(target, b"text now\n")], title="overwrite", ask_subject="blob.bin")

    [applied] = await apply_changes(ctx, "write", [target], plan)
    assert (applied.before_data, applied.after_data, applied.after) == (PNG, None, "text now\n")
    await revert_file(ctx, "blob.bin")
    assert target.read_bytes() == PNG
