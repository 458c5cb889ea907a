"""The bash judge: a command line read as the shell reads it (parse,
script_input), what each part reads, writes, deletes and runs (reads, effects,
output_files, command_effects, git_effects, git_dirs, program_code, opaque_programs,
scripts), those files judged (changed_files) and the whole judged against the
permission rules (judge), and how a judged command runs: in the sandbox or outside it
(sandbox_plan). The bash tool and `opencode permission check bash` call it."""
