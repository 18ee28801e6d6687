/* SPDX-License-Identifier: BSD-3-Clause */
/* PLACEHOLDER: not written yet; fails on purpose. */
int main(void);
int main(void) { return 1; }
