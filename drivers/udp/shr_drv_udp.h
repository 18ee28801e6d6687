/* SPDX-License-Identifier: BSD-3-Clause */
/* PLACEHOLDER: not written yet. */
