"""Compiled (numba) loop behind :func:`core.interleaving._kernel.tables_chunk`; imported only
when numba is.

Nothing here validates its input.  :func:`design_chunk` does, for one design and one chunk
of (repetition, user) elements, what the NumPy version does in about twenty whole-array
passes: three alias draws per element (the joint law of the counts and the common class,
then the A-only and the B-only class), the eq. 7 (RCT) and IPS terms, and their mean per
repetition -- in one pass, with nothing of the chunk's size allocated but the uniforms.  The
uniforms come from the same NumPy generators, in the same order, so the draws are the NumPy
version's draws; only the order of the final sums differs (last-bit differences).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["design_chunk"]

_JIT = {"cache": True, "nogil": True}


@numba.njit(inline="always", **_JIT)
def _draw(u, width, keep, codes, offset):
    """One alias draw (see :meth:`core.interleaving._kernel.AliasSet.draw`)."""
    x = u * width
    j = int(x)
    x -= j
    j += offset
    return codes[2 * j + (1 if x >= keep[j] else 0)]


@numba.njit(**_JIT)
def design_chunk(users, n_users, n, bits, u_joint, u_a, u_b,
                 j_width, j_keep, j_codes, off_joint,
                 c_width, c_keep, c_codes, off_a, off_b,
                 inv_t, inv_c, ok, weight, k_t, k_c,
                 want_rct, reweight, want_ips, rct_out, ips_out):
    """Per repetition (row of ``users``, ``n_users`` columns, flattened) the mean eq. 7 term
    (``rct_out``; ``reweight``: times the user's weight, else over defined users only, nan if
    none) and the mean IPS term (``ips_out``)."""
    mask = (1 << bits) - 1
    n_reps = rct_out.shape[0]
    for r in range(n_reps):
        s_rct = 0.0
        s_ips = 0.0
        defined = 0
        for q in range(r * n_users, (r + 1) * n_users):
            user = users[q]
            code = _draw(u_joint[q], j_width, j_keep, j_codes, off_joint[user])
            c = code & mask
            a = (code >> bits) & mask
            t_c = (code >> 2 * bits) & mask
            c_c = code >> 3 * bits
            b = n - c - a
            ka = _draw(u_a[q], c_width, c_keep, c_codes, off_a[user] + a * c_width)
            kb = _draw(u_b[q], c_width, c_keep, c_codes, off_b[user] + b * c_width)
            t_a = ka & mask
            c_a = ka >> bits
            t_b = kb & mask
            c_b = kb >> bits
            if want_rct:
                na = c + a
                nb = n - a
                s = ((t_c + t_a) * inv_t[na] - (c_c + c_a) * inv_c[na]) \
                    - ((t_c + t_b) * inv_t[nb] - (c_c + c_b) * inv_c[nb])
                if reweight:
                    s_rct += s * weight[user]
                elif ok[na] and ok[nb]:
                    s_rct += s
                    defined += 1
            if want_ips:
                s_ips += (t_a - t_b) * k_t[user] - (c_a - c_b) * k_c[user]
        if want_rct:
            if reweight:
                rct_out[r] = s_rct / n_users
            else:
                rct_out[r] = s_rct / defined if defined > 0 else np.nan
        if want_ips:
            ips_out[r] = s_ips / n_users
