"""Hard size limits, checked before any expensive work starts.

Every request is validated against these numbers first (engine.request); anything beyond them is
refused with a RequestError that names the field, so nothing can hang the bot. The exact engine's cost
grows with (attack dice x hits per die) x (target models x wounds per model), so it has a tighter
work budget than Monte Carlo, whose cost is linear in trials x attack dice.
"""

from __future__ import annotations

# Dice expressions ("3D6+3"): only D3 and D6 exist in 40k profiles.
DICE_FACES: tuple[int, ...] = (3, 6)
MAX_DICE_PER_EXPRESSION = 10  # "10D6" is the most a dice expression may roll; "999D6" is refused
MAX_FLAT = 200  # the largest constant (or "+N") in a dice expression

# Weapon groups and profiles.
MAX_GROUPS = 20  # weapon groups in one volley
MAX_MODELS_PER_GROUP = 100  # attacking models carrying one weapon group
MAX_KEYWORDS = 30
MAX_KEYWORD_CHARS = 80
MAX_NAME_CHARS = 120
MAX_STRENGTH = 100
MIN_AP = -10

# Target.
MAX_TARGET_MODELS = 100  # in all, over every model group
MAX_TARGET_GROUPS = 20  # model groups of a mixed target (contract 1b)
MAX_WOUNDS = 200  # per model (a Stompa has 40 in 11e)
MAX_DAMAGE_REDUCTION = 10

# Whole volley: maximum possible attack dice after BLAST/RAPID FIRE/CLEAVE.
MAX_ATTACK_DICE_EXACT = 1_000
MAX_ATTACK_DICE_MONTECARLO = 20_000

# Budget of one request (issue 9): under 2 s and 256 MB on this 2-core machine. engine.cost estimates
# seconds and peak bytes of the arrays a request allocates; half the time budget leaves room for a
# loaded machine, and the memory limit leaves room for the interpreter, numpy and BLAS (~70 MB RSS).
MAX_ESTIMATED_SECONDS = 1.0
# Monte Carlo's estimate is a fitted linear model (engine.cost) with a margin of its own: 1.5 s.
MAX_ESTIMATED_SECONDS_MONTECARLO = 1.5
MAX_ESTIMATED_BYTES = 128 * 2**20
# Exact engine against a mixed target (engine.mixed.work_estimate, ~4e8 being about a second).
MAX_EXACT_WORK = 400_000_000
# Exact engine with 10th-edition DEVASTATING WOUNDS keeps a pending-mortal-wounds axis (size = the
# unit's remaining wounds); its work is multiplied by that size.
MAX_TOTAL_WOUNDS_EXACT_10E_DEVASTATING = 400
# Exact engine against a mixed target (contract 1b): one dense state per pair (wounds lost by the
# non-character models, wounds lost by the character models); a step is a dense matrix product.
MAX_MIXED_STATES_EXACT = 1_500

# Monte Carlo.
DEFAULT_TRIALS = 100_000
MAX_TRIALS = 1_000_000
MAX_MONTECARLO_WORK = 100_000_000  # trials x max rolled hits: ~5 s of numpy at most

# Command line / batch.
MAX_BATCH = 100  # requests in one JSON list
MAX_BATCH_ESTIMATED_SECONDS = 5.0  # the whole list, estimated (engine.cost): a batch stays under 10 s
MAX_BATCH_REQUESTS = 2_500  # engine.evaluate_batch: checked one by one before any runs (a 30 x 30 matchup is 900)
MAX_INPUT_BYTES = 1_000_000
MAX_JSON_INT_DIGITS = 20  # longer integer literals are refused unconverted (a seed needs 19)

# Probability mass below this is treated as zero when trimming distribution tails (exact engine).
TAIL_EPSILON = 1e-17
