# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Goodput against tensor size, shouter against Gloo, from scripts/bench.sh's sweep (gnuplot 5.4,
# Debian's gnuplot-nox: the pngcairo terminal needs no X). One panel per collective; in each, one
# line per implementation and world size (shouter solid, Gloo dashed; the colour is the world).
#
#   gnuplot -e "csv='bench/latest.csv'; png='bench/latest.png'" scripts/plot_bench.gp
#
# Variables (-e, before the script): csv, png (required); colls (the panels, default "allreduce
# broadcast allgather reduce_scatter"), worlds (default "2 4"), subtitle (a second title line).
# The CSV: a header line, then collective,world,impl,bytes,iters,gbps,status; impl is shouter or
# gloo, bytes the per-rank block (the tensor of an allreduce), gbps the goodput (nan unless
# status is ok; status: ok, wrong, failed, unsupported). Only ok rows are drawn, each series
# in size order whatever the row order (a point that is not ok is a missing marker). Prints
# (stderr) one line per panel and world, "plot_bench: COLL n=W shouter=P gloo=Q
# gloo_unsupported=U" (P, Q: points drawn), then "plot_bench: wrote PNG"; exits non-zero on
# any error (a missing variable or file, a bad CSV).

if (!exists("csv") || !exists("png")) {
	print "plot_bench: set csv and png: gnuplot -e \"csv='IN'; png='OUT'\" plot_bench.gp"
	exit status 2
}
if (!exists("colls")) colls = "allreduce broadcast allgather reduce_scatter"
if (!exists("worlds")) worlds = "2 4"
if (!exists("subtitle")) subtitle = ""

set datafile separator comma
# a header line, then rows of seven fields, world and bytes numbers: anything else is a broken CSV
stats csv skip 1 using ((strlen(strcol(1)) > 0 && strlen(strcol(7)) > 0) ? $2 * $4 : NaN) nooutput
if (!exists("STATS_records") || STATS_invalid > 0) {
	print sprintf("plot_bench: %s: no rows, or rows that are not collective,world,impl," . \
		"bytes,iters,gbps,status", csv)
	exit status 1
}
# every panel spans the sweep's sizes
stats csv skip 1 using 4 nooutput
xlo = STATS_min / 1.4
xhi = STATS_max * 1.4

# the row belongs to this panel and series and has this status (strings only: a number
# compared in a "with table if" filter reads as undefined in gnuplot 5.4)
is(c, w, i, st) = strcol(1) eq c && strcol(2) eq sprintf("%d", w) && strcol(3) eq i && \
	strcol(7) eq st
nc = words(colls)
nw = words(worlds)
impl(j) = j == 1 ? "shouter" : "gloo"
array ptitle[nc]
array npts[nc]
# points of panel ci, impl j (1 shouter, 2 gloo), world wi
array nser[nc * 2 * nw]
ser(ci, j, wi) = ((ci - 1) * 2 + j - 1) * nw + wi

# first pass: each series' ok points into its own datablock $s<panel>_<impl>_<world>, counted
do for [ci = 1:nc] {
	c = word(colls, ci)
	ptitle[ci] = c
	npts[ci] = 0
	do for [wi = 1:nw] {
		w = int(word(worlds, wi))
		do for [j = 1:2] {
			eval sprintf("set table $s%d_%d_%d", ci, j, wi)
			plot csv skip 1 using 4:6 with table if (is(c, w, impl(j), "ok"))
			unset table
			# an empty datablock is no datablock for plot: one undefined point instead
			eval sprintf("n = |$s%d_%d_%d|", ci, j, wi)
			if (n == 0) {
				eval sprintf("set print $s%d_%d_%d", ci, j, wi)
				print "NaN NaN"
				unset print
			}
		}
		stats csv skip 1 using (is(c, w, "shouter", "ok") ? 1 : 0) nooutput
		ns = int(STATS_sum)
		stats csv skip 1 using (is(c, w, "gloo", "ok") ? 1 : 0) nooutput
		ng = int(STATS_sum)
		nser[ser(ci, 1, wi)] = ns
		nser[ser(ci, 2, wi)] = ng
		stats csv skip 1 using (is(c, w, "gloo", "unsupported") ? 1 : 0) nooutput
		nu = int(STATS_sum)
		npts[ci] = npts[ci] + ns + ng
		print sprintf("plot_bench: %s n=%d shouter=%d gloo=%d gloo_unsupported=%d", \
			c, w, ns, ng, nu)
		if (nu > 0 && ng == 0 && strstrt(ptitle[ci], "unsupported") == 0) {
			ptitle[ci] = ptitle[ci] . " (Gloo: unsupported)"
		}
	}
}
set datafile separator whitespace

set terminal pngcairo size 1200, 420 * int((nc + 1) / 2) font "sans,10" noenhanced
set output png
set multiplot layout int((nc + 1) / 2), (nc > 1 ? 2 : 1) \
	title "shouter vs Gloo: goodput against tensor size" . (subtitle eq "" ? "" : "\n" . subtitle)
set logscale x 2
set xrange [xlo:xhi]
set xtics ()
do for [e = 10:30:2] {
	set xtics add (sprintf(e < 20 ? "%d KiB" : (e < 30 ? "%d MiB" : "%d GiB"), \
		2**(e < 20 ? e - 10 : (e < 30 ? e - 20 : e - 30))) 2**e)
}
set xlabel "tensor size (per-rank block, float32)"
set ylabel "goodput per rank (Gbit/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set grid
set key top left
set pointsize 1.2
array colour[4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

do for [ci = 1:nc] {
	set title ptitle[ci]
	unset label 1
	if (npts[ci] == 0) {
		# nothing measured (this collective not in the sweep, or every run failed)
		set yrange [0:1]
		set label 1 "no data" at graph 0.5, 0.5 center
		plot -1 notitle
		continue
	}
	set yrange [0:*]
	# smooth unique: each series in size order, whatever the CSV's row order
	plot for [wi = 1:nw] sprintf("$s%d_1_%d", ci, wi) using 1:2 smooth unique \
			with linespoints lw 2 pt 7 dt 1 lc rgb colour[(wi - 1) % 4 + 1] \
			title (nser[ser(ci, 1, wi)] > 0 ? sprintf("shouter N=%s", word(worlds, wi)) : ""), \
		for [wi = 1:nw] sprintf("$s%d_2_%d", ci, wi) using 1:2 smooth unique \
			with linespoints lw 2 pt 6 dt 2 lc rgb colour[(wi - 1) % 4 + 1] \
			title (nser[ser(ci, 2, wi)] > 0 ? sprintf("Gloo N=%s", word(worlds, wi)) : "")
}
unset multiplot
unset output
print sprintf("plot_bench: wrote %s", png)
