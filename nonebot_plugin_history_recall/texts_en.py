"""The English table (``HISTORY_RECALL_LANGUAGE=en``): the keys and ``{placeholders}`` of
``texts.ZH``, in the glossary's English words (texts.py)."""

EN: dict[str, str] = {
    # -- /recall --
    "forward_name": "recall",
    "untitled": "(untitled)",
    "low_relevance": "weak match",
    "held_that_day": "held that day",
    "list_sep": ", ",
    "private_chat": "📌 {recall} works in groups only: it searches the history of the group's project.",
    "in_group_only": "📌 {command} works in groups only.",
    "bad_mode": "⚠️ --mode takes hybrid, keyword or semantic, not \"{value}\".",
    "bad_limit": "⚠️ --limit takes a whole number from {low} to {high}, not \"{value}\".",
    "bad_date": "⚠️ {option} \"{value}\" is not a date: write a date (2026-11-01) or a span back from now "
                "(24h, 7d, 2w, 3m).",
    "bad_dates": "⚠️ --after \"{after}\" or --before \"{before}\" is wrong: write dates (2026-11-01) or spans "
                 "(24h, 7d, 2w, 3m), with --after earlier than --before.",
    "bad_open": "⚠️ --open takes a result number, e.g. --open 2.",
    "open_gone": "📭 That result is no longer in this group's project (moved or forgotten); run {recall} again.",
    "open_none": "📭 Nothing to open yet: search with {recall} <question> first, then --open N opens one result.",
    "open_range": "⚠️ The last search has {count} results; --open takes 1 to {count}.",
    "cooldown": "⏳ Searching too often: try again in {seconds} s.",
    "usage": "⚠️ I did not understand that. Usage: {recall} <question> [--mode {modes}] [--limit {low}-{high}] "
             "[--after 7d] [--before 2026-11-01], or {recall} --open N",
    "held_then_too_many": "🔍 Project \"{project}\" held {count} conversations in the time \"{query}\" names, more "
                          "than one answer shows. Add what it was about (e.g. \"{query} deploy\"), or name a "
                          "shorter time (e.g. last Wednesday, May 3rd).",
    "no_results": "🔍 Nothing in project \"{project}\" about \"{query}\". Try other words, or --mode keyword for "
                  "exact words only.",
    "no_results_dated": "🔍 Nothing in project \"{project}\" about \"{query}\" within {dates}. Widen or drop the "
                        "date filter and try again.",
    "results": "📚 {related} conversations in project \"{project}\" about \"{query}\".",
    "results_weak": "📚 {related} conversations in project \"{project}\" about \"{query}\", and {weak} weak matches.",
    "results_weak_only": "🔍 Nothing in project \"{project}\" clearly about \"{query}\"; the {weak} below are weak "
                         "matches only.",
    "open_hint": "({recall} --open N opens result N)",
    "left_out": "…{count} more not shown.",
    "context_header": "📖 Result {index}: {title} · project \"{project}\"",
    "role_user": "👤 user",
    "role_agent": "🤖 agent",
    "semantic_consent_required": "(semantic search has no consent yet: keyword results only)",
    "semantic_disabled": "(semantic search is off: keyword results only)",
    "semantic_unavailable": "(semantic search is unavailable right now: keyword results only)",
    "semantic_indexing": "(the semantic index is still being built: results may be incomplete)",
    "today": "today {time}", "yesterday": "yesterday {time}", "days_ago": "{days} days ago",
    "this_year": "{year}-{month:02d}-{day:02d}", "other_year": "{year}-{month:02d}-{day:02d}",
    # -- help --
    "help_recall": "📚 {recall} <question> — search the history of this group's project",
    "help_mode": "  --mode {modes}  how to search (default {default})",
    "help_limit": "  --limit N  how many conversations ({low}-{high}, default {count})",
    "help_dates": "  --after 7d / --before 2026-11-01  only messages after / before this (a date, or 24h, 7d, 2w, 3m)",
    "help_open": "{recall} --open N — open result N of this group's last search, with the turns around it",
    "help_example": "e.g. {recall} how did we plan the database migration --after 30d; {recall} what did we "
                    "talk about yesterday (yesterday, last week, May 3rd: that day's conversations first)",
    "help_forget": "{forget} [--after 7d] [--before date] [--result N] — take your own words in this group out of "
                   "recall (asks first)",
    "help_optout": "{optout} / {optin} — keep your future words out of recall / let them count again",
    "help_cooldown": "Each member waits {seconds} s between two searches.",
    "help_admins": "Admins:",
    "help_move_list": "{move} — list the projects this group can be linked to",
    "help_move": "{move} <project> — move this group's conversations to a project and link the group to it",
    "help_move_home": "{move} --home — unlink the group; its conversations go back to Home",
    "help_forget_admin": "{forget} --session <conversation id> | --all --before <date> | --member <user id>"
                         " — forget a conversation, everything before a date, or one member's words",
    "help_switch": "{off} / {on} — switch this group's recall off / on again",
    "help_status": "{status} — the recall service and this group's state",
    # -- API errors, as a group member sees them --
    "unreachable": "⚠️ The recall service cannot be reached right now; try again later.",
    "timeout": "⚠️ The recall service did not answer in time; try again later.",
    "unauthorized": "⚠️ The recall service refused the bot's key; please tell an admin.",
    "unknown_profile": "⚠️ The recall service address is misconfigured; please tell an admin.",
    "no_route": "⚠️ The recall service address is misconfigured; please tell an admin.",
    "query_too_long": "⚠️ The question is too long; shorten it and try again.",
    "server_error": "⚠️ The recall service failed; try again later.",
    "store_fault": "⚠️ Recall is paused: {file} on the Hermes machine {problem}. It needs the "
                   "operator; please tell an admin.",
    "store_busy": "⚠️ The history is locked by another program right now; try again in a moment.",
    "a_data_file": "a data file", "named_file": "the data file {file}",
    "problem_damaged": "is damaged", "problem_missing": "is missing", "problem_empty": "is empty",
    "problem_behind": "is an older copy", "problem_full": "is on a full disk",
    "problem_read_only": "is in a read-only folder", "problem_unreadable": "cannot be read",
    "unknown_project": "⚠️ No such project. Send {move} to list the projects this group can be linked to.",
    "unknown_project_named": "⚠️ No project named \"{project}\". Send {move} to list the projects this group can be "
                             "linked to.",
    "folder_missing": "⚠️ The project's folder is missing on the Hermes machine; please tell the operator.",
    "no_db": "📭 This Hermes has no conversations yet.",
    "session_not_found": "⚠️ No such conversation.",
    "bad_request": "⚠️ The recall service did not understand the request; check the options.",
    "refused": "⚠️ The recall service refused the request.",
    "not_yours": "⚠️ That result cannot be confirmed as your own words; only an admin can forget someone else's.",
    "bad_answer": "⚠️ The recall service sent an answer the bot cannot read; please tell an admin.",
    "unbound": "📭 This group is not linked to a project yet; an admin can link it with {move} <project>.",
    "unbound_home": "📭 This group is not linked to a project (its conversations are in Home); an admin can "
                    "link it with {move} <project>.",
    "unbound_archived": "📭 This group's project is archived, so its history cannot be searched; an admin can "
                        "link another with {move} <project>.",
    "unbound_missing": "📭 This group's project no longer exists; an admin can link another with {move} <project>.",
    "recall_off": "🔕 An admin switched recall off in this group; an admin can switch it on with {on}.",
    # -- the same failures as an admin sees them --
    "admin_unreachable": "Cannot reach the recall service at {url} ({cause}). Run `hermes recall serve` on the "
                         "Hermes machine and check that HISTORY_RECALL_API_URL names its address and port.",
    "admin_timeout": "The recall service at {url} did not answer within {seconds} s. Look at the terminal of "
                     "`hermes recall serve` or $HERMES_HOME/logs/recall-api.log; raise HISTORY_RECALL_TIMEOUT "
                     "if needed.",
    "admin_unauthorized": "The recall service at {url} refused the bot's key: the bot's HISTORY_RECALL_API_KEY "
                          "must equal the Hermes profile's RECALL_API_KEY. The terminal of `hermes recall serve` "
                          "and recall-api.log say why it refused.",
    "admin_unknown_profile": "The recall service at {url} has no such Hermes profile: check the name after /p/, "
                             "that the profile enables the plugin and that its .env has a RECALL_API_KEY.",
    "admin_no_route": "{url} is not the recall service (404): HISTORY_RECALL_API_URL must point at "
                      "`hermes recall serve`.",
    "admin_server_error": "The recall service at {url} failed ({cause}): the terminal of `hermes recall serve` "
                          "and recall-api.log have the details.",
    "admin_store_fault": "The recall service at {url} stopped searching: {file} on the Hermes machine {problem}. "
                         "Run `hermes recall status` there: its Next: lines say how to fix it.",
    "admin_bad_answer": "{url} did not answer like the recall service: HISTORY_RECALL_API_URL may point at another "
                        "service.",
    "cause_refused": "connection refused: nothing listens on that port",
    "cause_dns": "unknown host name",
    "cause_bad_url": "the address is malformed",
    "cause_other": "network error",
    # -- /move --
    "move_usage": "Usage: {move} <project>, or {move} --home (unlink)",
    "moved": "✅ Moved this group's {count} conversations to project \"{project}\"; the group is linked to it and "
             "new conversations land there too.",
    "moved_nothing": "✅ This group is linked to project \"{project}\"; new conversations land there (there were "
                     "none to move).",
    "moved_home": "✅ Unlinked: this group's {count} conversations went back to Home.",
    "moved_home_nothing": "✅ This group is linked to no project now (there were no conversations to move to Home).",
    "move_none_allowed": "📁 This group's admins cannot move it yet: a bot admin has to list the projects it may "
                         "choose (move_projects) in the config.",
    "move_not_allowed": "⚠️ This group can be linked to these projects only: {projects}.",
    "no_projects": "📁 Hermes has no projects yet; create one in Hermes first.",
    "projects_header": "📁 Projects this group can be linked to ({count}):",
    "project_row": "• {name} — {move} {ref}",
    "current_project": "  ✅ linked now",
    # -- /recall-status (bot admins) --
    "status_title": "🩺 Recall status of this group",
    "status_route_default": "Recall service: the default address (HISTORY_RECALL_API_URL)",
    "status_route_group": "Recall service: this group's own address (HISTORY_RECALL_GROUPS)",
    "status_connected": "Connection: ✅ Hermes profile {profile} · plugin version {version}",
    "status_failed": "Connection: ❌ {reason}",
    "status_index_failed": "Index: ❌ {reason}",
    "binding_private": "Project: none (private chat)",
    "binding_error": "Project: {reason}",
    "binding_bound": "Project: \"{project}\"",
    "binding_missing": "Project: \"{project}\" (deleted or archived)",
    "binding_home": "Project: none (unlinked)",
    "binding_unbound": "Project: not linked yet",
    "index_all": "Index: {count} projects",
    "index_row": "Index: {indexed}/{messages} messages in the semantic index, {sessions} conversations · {state}",
    "semantic_missing": "Semantic search: not installed, keyword search only",
    "semantic_line": "Semantic search: {provider}{model} · {state} ({consent})",
    "semantic_indexing_now": ", indexing now",
    "isolation_not_reported": "Isolation: ⚠️ not reported by the recall service",
    "isolation_closed": "Isolation: ✅ the agent in a group searches only the group's project and reads no other chat",
    "isolation_open": "Isolation: ⚠️ not complete ({doors}); run `hermes recall status` on the Hermes machine "
                      "for details",
    "status_store": "Storage: ❌ {file} {problem}; run `hermes recall status` on the Hermes machine for the fix",
    "translation_off": "Chinese and English words across languages: ⚠️ off; run `hermes recall status` on the "
                       "Hermes machine for why",
    "state_ready": "ready", "state_partial": "partly indexed", "state_indexing": "indexing",
    "state_consent_required": "waiting for consent", "state_disabled": "off", "state_unavailable": "unavailable",
    "state_not_indexed": "not indexed yet", "state_unknown": "unknown",
    "consent_not_needed": "local model, nothing leaves the machine, no consent needed",
    "consent_granted": "consent given to send text out", "consent_required": "no consent, nothing is sent",
    "consent_unknown": "consent unknown",
    "provider_local": "local model", "provider_openai": "remote service",
    # -- /forget, /recall-off, /recall-optout --
    "still_in_hermes": "Note: Hermes' own state.db and logs still hold the words; the operator deletes them with "
                       "Hermes' own commands.",
    "forget_admin_only": "⚠️ Only admins can forget a whole conversation, everything before a date, or someone "
                         "else's words.",
    "forget_nothing_pending": "📭 No {forget} is waiting for confirmation (it may have lapsed); send it again.",
    "forget_cancelled": "👌 Cancelled; nothing was forgotten.",
    "nothing_to_forget": "📭 Nothing to forget.",
    "nothing_attributable": "📭 Nothing here can be confirmed as yours: this group's conversations are shared, so "
                            "who said what cannot be told apart; an admin can forget by conversation or date.",
    "forget_usage": "Usage: {forget} — forget all your words in this group; {forget} --after 7d --before "
                    "2026-11-01; {forget} --result N (result N of the last {recall}); confirm with {forget} "
                    "confirm. Admins: {forget} --session <conversation id> / --all --before <date> / --member "
                    "<user id>",
    "forget_counts_own": "your {turns} turns and the agent's {replies} replies ({conversations} conversations, "
                         "{span})",
    "forget_counts": "{turns} turns and the agent's {replies} replies ({conversations} conversations, {span})",
    "forget_preview": "🧹 This forgets {counts}. The agent's replies go too, because they may quote the words.\n"
                      "Send {forget} confirm within {seconds} s to do it, {forget} cancel to drop it.",
    "forget_done": "✅ Forgot {counts}; receipt {receipt}.\nNeither {recall} nor the agent finds them in this group "
                   "again.",
    "recall_switched_off": "🔕 Recall is off in this group (receipt {receipt}).\nNeither {recall} nor the agent "
                           "searches this group's history, and words said while it is off are never recalled. "
                           "{on} switches it on again.",
    "recall_switched_on": "🔔 Recall is on again in this group (receipt {receipt}).",
    "opted_out": "🙈 From now on your words in this group stay out of recall (receipt {receipt}).\nEarlier words "
                 "are not affected: {forget} forgets them; {optin} undoes this. Hermes itself still records the "
                 "conversation.",
    "opted_in": "👌 Your words count for recall again (receipt {receipt}); what you said while opted out stays out.",
    "optout_not_attributable": "⚠️ Everyone in this group shares one conversation, so nobody can tell who said "
                               "what, and your words cannot be kept out alone. An admin can switch the group's "
                               "recall off with {off}, or forget a span with {forget} --all --before <date>.",
    "shared_not_included": "Turns in this group's shared conversation that cannot be told apart are not among "
                           "them; an admin can forget them by date.",
}
