"""The smoke subset: the tests `pytest -m smoke` runs (tests/conftest.py marks them)."""

# `pytest -m smoke`: the one-minute subset a contributor runs before a commit. One place names it:
# the loader contract (thread mode, and one save in process mode), the console's main commands, MCP
# over stdio and over HTTP, and process isolation. test_smoke_list.py fails when an entry
# names a test that no longer exists.
SMOKE = (
    "e2e/test_contract.py::test_01_new_file_appears[thread]",
    "e2e/test_contract.py::test_01_new_file_appears[process]",
    "e2e/test_contract.py::test_02_edit_in_place_swaps_all_tools_of_the_file_together[thread]",
    "e2e/test_contract.py::test_03_editor_atomic_saves_are_edits[thread-_atomic_rename]",
    "e2e/test_contract.py::test_05_burst_of_saves_coalesces_into_one_execution[thread]",
    "e2e/test_contract.py::test_06_delete_and_move_out_remove_tools[thread]",
    "e2e/test_contract.py::test_07_tool_removed_or_renamed_inside_a_file_disappears[thread]",
    "e2e/test_contract.py::test_08_broken_save_keeps_last_good_version[thread-syntax]",
    "e2e/test_contract.py::test_10_in_flight_call_finishes_on_its_version_then_cleanup[thread]",
    "e2e/test_contract.py::test_helper_edit_reloads_every_dependent_transitively[thread]",
    "console/test_cli_list.py::test_table_lists_every_sample_tool_with_kind_source_parameters_and_version",
    "console/test_cli_list.py::test_failures_and_conflicts_have_their_own_section_and_exit_status_1",
    "console/test_cli_call.py::test_json_result_is_pretty_printed_and_the_context_tool_sees_its_call",
    "console/test_cli_call.py::test_error_result_exits_1",
    "console/test_cli_call.py::test_unknown_tool_lists_the_available_ones",
    "console/test_cli_check.py::test_sample_tools_pass_strict",
    "console/test_cli_check.py::test_load_failures_conflicts_and_invalid_names_are_errors",
    "console/test_cli_inspect.py::test_class_tool_page_shows_schema_metadata_examples_and_source",
    "console/test_cli_watch.py::test_without_a_terminal_prints_one_plain_line_per_event",
    "console/test_serve_command.py::test_stdio_client_follows_every_edit[auto]",
    "console/test_serve_command.py::test_http_each_client_follows_edits_alone",
    "mcp/test_server.py::test_call_maps_text_and_json[auto]",
    "mcp/test_server.py::test_every_change_set_reaches_every_client_once",
    "isolation/test_process_mode.py::test_a_crash_in_process_mode_is_an_error_result_of_that_call[exit-exited with status 3]",
    "isolation/test_process_mode.py::test_crashed_worker_is_replaced_and_every_tool_keeps_answering[exit]",
    "isolation/test_process_mode.py::test_a_stuck_call_times_out_while_other_calls_are_answered[loop]",
    "test_public_api.py",
)
