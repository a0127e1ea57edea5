"""``sitegen measure``: plan → engine → records.

Trials with an ok record are skipped, so an interrupted campaign resumes where it
stopped. A failed request, a missed input length or an engine that will not load becomes
a ``failed`` record (failed requests are data) and the campaign goes on; a later run
tries each planned trial whose latest attempt failed again, as a new attempt, keeping
the failed one. A condition whose engine failed ``MAX_CONSECUTIVE_ENGINE_FAILURES``
trials in a row (an outage) is stopped for this run: its remaining trials are left
pending for the next run rather than burnt as failed records.

The package: ``campaign_runner`` (the campaign loop as named steps), ``rounds`` (what a run has to
do, in units that run together), ``round_runner`` (the engines and one round),
``requests`` (sending a round's requests while sampling), ``trial_records`` (a round's records), ``progress``
(the progress line), ``preflight`` (checks before anything runs)
and ``native`` (native engine output into the campaign's log).
"""

from sitegen.measure.campaign_runner import (
    MAX_CONSECUTIVE_ENGINE_FAILURES,
    CampaignResult,
    Progress,
    StoppedCondition,
    run_campaign,
    run_trials,
)
from sitegen.measure.round_runner import Phase

__all__ = [
    "MAX_CONSECUTIVE_ENGINE_FAILURES",
    "CampaignResult",
    "Phase",
    "Progress",
    "StoppedCondition",
    "run_campaign",
    "run_trials",
]
