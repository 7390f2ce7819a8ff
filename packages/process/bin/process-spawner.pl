# The process spawner in Perl: the same protocol, frames and rules as process-spawner.mjs (read
# its header and packages/process/src/process-spawner.ts for the why and the frame layout), with
# a smaller process to fork: ~6 MB against ~55 MB. A spawn of /bin/true through it costs ~1.2 ms
# of CPU (its own ~0.4, the child's ~0.8) against ~1.6 ms through the Node one (~0.8 + ~0.8);
# test/bench/git-spawner-bench.ts measures it per git call. Perl and the modules of perl-base
# only (Essential on Debian, and git depends on perl), so it runs wherever git does; the parent
# falls back to the Node one where there is no perl (src/spawner-program.ts).
#
# One thread, one select loop. A child is started as libuv starts one: fork; in the child a new
# session (detached), stdio, the cwd, then exec with exactly the request's environment (PATH
# searched in it); an exec that fails writes its errno to a close-on-exec pipe the parent reads,
# so a failure is an ERROR with started:false carrying the errno's name (ENOENT, EACCES) as
# Node's would. Once it exec'd, its niceness is lowered as the Node spawner does. Every
# descriptor of its own is close-on-exec (Perl sets it on all above $^F = 2), so a child gets
# stdio and nothing else (but what this process itself inherited without close-on-exec, as with
# Node).
#
# Launch preludes (src/launch-prelude.ts): a request may carry steps its child takes on itself
# before it execs (close inherited descriptors, open files on 3-9, join cgroups, set rlimits,
# empty its environment), which spares a host launcher's shell (an exec and ~0.9 ms of CPU per
# sandboxed run). Only where close and prlimit64 are known by number (x86_64, aarch64, a 64-bit
# perl on Linux): its HELLO frame, the first it sends, tells the parent whether it applies them.
#
# Lifetime: ignores SIGINT, SIGTERM and SIGHUP, exits when its stdin reaches end of file or its
# parent is gone (reparented), SIGKILLing the process groups of its running detached children first.
use strict;
use warnings;
use Config;
use Errno qw(EINTR EAGAIN EACCES ENOENT ENOTDIR);
use Fcntl qw(F_DUPFD F_GETFL F_SETFD F_SETFL FD_CLOEXEC O_NONBLOCK O_RDONLY O_WRONLY);

use constant {
  HEADER => 9,
  # Parent -> spawner.
  SPAWN => 1, IN_DATA => 2, IN_END => 3,
  # Spawner -> parent.
  SPAWNED => 1, ERROR => 2, OUT_DATA => 3, ERR_DATA => 4, EXIT => 5, CLOSE => 6, HELLO => 7,
  CHUNK => 65536,
};

# id -> call: { pid, detached, out, err (read handles, undef once at end of file), in (write
# handle), queue (bytes for stdin), ending (STDIN_END came), exit (the EXIT body once reaped) }.
my %calls;
# fileno -> [id, OUT_DATA | ERR_DATA] of the outputs still open.
my %outputs;
# pid -> id of the children not yet reaped.
my %running;
my $parent = getppid();
my $autogroups;

$0 = 'overseer-spawner';    # ps and /proc/<pid>/comm: the scale bench counts its CPU by this name
# Caught, not ignored: exec resets a caught signal to its default, so a child starts with none
# of these ignored and nothing to undo between fork and exec.
$SIG{$_} = sub { } for qw(INT TERM HUP PIPE);

# setsid, dup2 and _exit without the POSIX module: loading it makes every fork cost ~0.15 ms
# more (its symbols are memory the kernel copies and tears down per child). By the syscall's
# number where the architecture is known, else through POSIX after all.
my %SYSCALLS = (
  x86_64 => [112, 33, 231],
  aarch64 => [157, undef, 94, 24],
  riscv64 => [157, undef, 94, 24],
  arm => [66, 63, 248],
  i686 => [66, 63, 252], i386 => [66, 63, 252], i486 => [66, 63, 252], i586 => [66, 63, 252],
);
my ($SETSID, $DUP2, $EXIT, $DUP3) = @{ $SYSCALLS{ (split /-/, $Config{archname})[0] } || [] };
require POSIX unless $SETSID;

sub setsid { return $SETSID ? syscall($SETSID) : POSIX::setsid() }
sub dup2 {
  my ($from, $to) = @_;
  return syscall($DUP2, $from, $to) if $DUP2;
  return syscall($DUP3, $from, $to, 0) if $DUP3;
  return defined POSIX::dup2($from, $to) ? $to : -1;
}
sub quit { $EXIT ? syscall($EXIT, $_[0]) : POSIX::_exit($_[0]); }
# close and prlimit64, for launch preludes; none elsewhere (the parent then keeps its launcher).
my %PRELUDE_SYSCALLS = (x86_64 => [3, 302], aarch64 => [57, 261]);
my ($CLOSE, $PRLIMIT64) = $^O eq 'linux' && ($Config{ivsize} || 0) >= 8 && $EXIT && ($DUP2 || $DUP3)
  ? @{ $PRELUDE_SYSCALLS{ (split /-/, $Config{archname})[0] } || [] } : ();
# The generic Linux resource numbers (the same on both).
my %RLIMITS = (cpu => 0, fsize => 1, core => 4, as => 9);
open(my $devnull, '<', '/dev/null') or die "process-spawner: /dev/null: $!\n";
# SIGCHLD wakes the select loop through a pipe of its own (a flag alone could be set just before select sleeps).
pipe(my $wake_r, my $wake_w) or die "process-spawner: pipe: $!\n";
nonblocking($_) for $wake_r, $wake_w;
$SIG{CHLD} = sub { syswrite($wake_w, 'x') };
binmode($_) for \*STDIN, \*STDOUT;

sub nonblocking {
  my ($fh) = @_;
  my $flags = fcntl($fh, F_GETFL, 0);
  fcntl($fh, F_SETFL, $flags | O_NONBLOCK) if defined $flags;
}

sub json_str {
  my ($s) = @_;
  $s =~ s/(["\\])/\\$1/g;
  $s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$s");
}

sub send_frame {
  my ($type, $id, $body) = @_;
  $body = '' unless defined $body;
  my $frame = pack('NCN', HEADER - 4 + length($body), $type, $id) . $body;
  # Our stdout is a pipe in blocking mode: frames go out whole and in order.
  my $off = 0;
  while ($off < length $frame) {
    my $n = syswrite(STDOUT, $frame, length($frame) - $off, $off);
    if (!defined $n) {
      next if $! == EINTR;
      shutdown_all();    # the parent is gone
    }
    $off += $n;
  }
}

# ---- JSON: the SPAWN request (an object of strings, string lists, booleans and numbers).

my %UNESCAPE = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n", r => "\r", t => "\t");

sub utf8_bytes {
  my ($code) = @_;
  # A lone surrogate becomes U+FFFD, as Node's own encoding of a string does.
  $code = 0xfffd if $code >= 0xd800 && $code <= 0xdfff;
  my $ch = chr $code;
  utf8::encode($ch);
  return $ch;
}

sub json_string {
  my ($t) = @_;
  my $s = '';
  while (1) {
    if ($$t =~ /\G([^"\\]+)/gc) { $s .= $1 }
    elsif ($$t =~ /\G"/gc) { return $s }
    elsif ($$t =~ /\G\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})/gc) {
      $s .= utf8_bytes(0x10000 + ((hex($1) - 0xd800) << 10) + (hex($2) - 0xdc00));
    }
    elsif ($$t =~ /\G\\u([0-9a-fA-F]{4})/gc) { $s .= utf8_bytes(hex $1) }
    elsif ($$t =~ /\G\\(["\\\/bfnrt])/gc) { $s .= $UNESCAPE{$1} }
    else { die "bad JSON string\n" }
  }
}

sub json_value {
  my ($t) = @_;
  $$t =~ /\G\s*/gc;
  return json_string($t) if $$t =~ /\G"/gc;
  if ($$t =~ /\G([\[{])/gc) {
    my $object = $1 eq '{';
    my (@list, %hash);
    $$t =~ /\G\s*/gc;
    unless ($$t =~ /\G[\]}]/gc) {
      while (1) {
        if ($object) {
          $$t =~ /\G\s*"/gc or die "bad JSON key\n";
          my $key = json_string($t);
          $$t =~ /\G\s*:/gc or die "bad JSON object\n";
          $hash{$key} = json_value($t);
        }
        else { push @list, json_value($t) }
        $$t =~ /\G\s*/gc;
        next if $$t =~ /\G,/gc;
        last if $$t =~ /\G[\]}]/gc;
        die "bad JSON\n";
      }
    }
    return $object ? \%hash : \@list;
  }
  return $1 + 0 if $$t =~ /\G(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/gc;
  return 1 if $$t =~ /\Gtrue/gc;
  return 0 if $$t =~ /\Gfalse/gc;
  return undef if $$t =~ /\Gnull/gc;
  die "bad JSON value\n";
}

# ---- Starting a child.

sub errno_name {
  my ($errno) = @_;
  local $! = $errno;
  for my $name (keys %!) { return $name if $!{$name} }
  return "E$errno";
}

sub spawn_error {
  my ($id, $file, $errno) = @_;
  my $code = errno_name($errno);
  send_frame(ERROR, $id, '{"message":' . json_str("spawn $file $code") . ',"code":' . json_str($code)
    . ",\"errno\":-$errno,\"syscall\":" . json_str("spawn $file") . ',"path":' . json_str($file)
    . ',"started":false}');
}

# The same steps as child-priority.ts (which says why): the process's niceness, and its session's
# scheduling group's where the kernel gives each session one (autogroup). Best effort.
sub lower_priority {
  my ($pid, $nice) = @_;
  setpriority(0, $pid, $nice);
  if (!defined $autogroups) {
    my $fh;
    $autogroups = open($fh, '<', '/proc/sys/kernel/sched_autogroup_enabled') && (<$fh> // '') =~ /^1/ ? 1 : 0;
  }
  if ($autogroups && open(my $fh, '>', "/proc/$pid/autogroup")) {
    print $fh $nice;
    close $fh;
  }
}

# ---- Launch preludes (src/launch-prelude.ts).

# The request's prelude checked and flattened for the child ([exit, [op, a, b, failure]...]);
# undef without one; dies on a bad one (or one this process cannot apply).
sub prelude_plan {
  my ($prelude) = @_;
  return undef unless defined $prelude;
  die "no launch preludes here\n" unless $PRLIMIT64;
  my $int = sub { defined $_[0] && !ref $_[0] && $_[0] =~ /^\d{1,16}$/ };
  my $text = sub { defined $_[0] && !ref $_[0] && length $_[0] && $_[0] !~ /[\n\0]/ };
  my $path = sub { $text->($_[0]) && $_[0] =~ m{^/} };
  die "bad prelude\n" unless ref $prelude eq 'HASH' && ref $prelude->{steps} eq 'ARRAY'
    && $int->($prelude->{failureExit}) && $prelude->{failureExit} >= 1 && $prelude->{failureExit} <= 255;
  my @steps;
  for my $step (@{ $prelude->{steps} }) {
    die "bad prelude step\n" unless ref $step eq 'HASH';
    my ($op, $failure) = ($step->{op} // '', $step->{failure});
    if ($op eq 'open' && $int->($step->{fd}) && $step->{fd} >= 3 && $step->{fd} <= 9 && $path->($step->{path})
      && $text->($failure)) {
      push @steps, ['open', $step->{fd} + 0, $step->{path}, $failure];
    }
    elsif ($op eq 'join' && $path->($step->{path}) && $text->($failure)) { push @steps, ['join', $step->{path}, undef, $failure] }
    elsif ($op eq 'rlimit' && defined $RLIMITS{ $step->{resource} // '' } && $int->($step->{value})
      && (!defined $failure || $text->($failure))) {
      push @steps, ['rlimit', $RLIMITS{ $step->{resource} }, $step->{value} + 0, $failure];
    }
    else { die "bad prelude step\n" }
  }
  return [$prelude->{failureExit} + 0, @steps];
}

# Opens `path` read-only on descriptor `fd`, inherited by what the child execs.
sub open_on {
  my ($path, $fd, $keep) = @_;
  sysopen(my $fh, $path, O_RDONLY) or return 0;
  if (fileno $fh == $fd) {
    push @$keep, $fh;    # held until the exec, and not close-on-exec (Perl sets it above 2)
    return fcntl($fh, F_SETFD, 0);
  }
  return dup2(fileno $fh, $fd) == $fd;    # a dup is not close-on-exec; $fh closes on return
}

# Writes the child's pid into a cgroup's cgroup.procs (never created here).
sub join_cgroup {
  my ($path) = @_;
  sysopen(my $fh, $path, O_WRONLY) or return 0;
  my $line = "$$\n";
  my $n = syswrite($fh, $line);
  return defined $n && $n == length $line;
}

# In the forked child, after its stdio and cwd: the prelude's steps. Returns the failure line of
# the step that failed, or undef. `$report` (close-on-exec) moves above 9 if it sits below.
sub run_prelude {
  my ($plan, $report) = @_;
  if (fileno $$report <= 9) {
    my $moved = fcntl($$report, F_DUPFD, 10);
    open(my $fh, '>&=', $moved) or return 'overseer-sandbox: cannot move the spawn report descriptor';
    fcntl($fh, F_SETFD, FD_CLOEXEC);
    syscall($CLOSE, fileno($$report) + 0);
    $$report = $fh;
  }
  my @fds = 3 .. 1023;
  if (opendir(my $dir, '/proc/self/fd')) {
    @fds = grep { /^\d+$/ && $_ > 2 } readdir $dir;
    closedir $dir;
  }
  my $keep_fd = fileno $$report;
  syscall($CLOSE, $_ + 0) for grep { $_ != $keep_fd } @fds;
  my ($exit, @steps) = @$plan;
  my @keep;
  for my $step (@steps) {
    my ($op, $x, $y, $failure) = @$step;
    my $ok = $op eq 'open' ? open_on($y, $x, \@keep)
      : $op eq 'join' ? join_cgroup($x)
      : syscall($PRLIMIT64, 0, $x, pack("QQ", $y, $y), 0) == 0;
    return $failure if !$ok && defined $failure;
  }
  %ENV = ();
  return undef;
}

# In the forked child: never returns. An errno on `$report` says why it did not exec. As little
# as possible runs here (each page it writes is copied for it): the parent prepared the rest.
sub become {
  my ($detached, $fds, $cwd, $paths, $argv, $report, $plan) = @_;
  my $errno = 0;
  setsid() if $detached;
  for my $fd (0 .. 2) {
    next if dup2($fds->[$fd], $fd) >= 0;
    $errno = $! + 0;
    last;
  }
  $errno = $! + 0 if !$errno && !chdir($cwd);
  if ($plan && !$errno) {
    # A failed step ends the child as a host launcher would: it started, and exits with the code.
    my $failure = run_prelude($plan, \$report);
    if (defined $failure) {
      syswrite(STDERR, "$failure\n");
      quit($plan->[0]);
    }
  }
  if (!$errno) {
    my $denied = 0;
    for my $path (@$paths) {
      { no warnings 'exec'; exec { $path } @$argv; }
      my $e = $! + 0;
      if ($e == EACCES) { $denied = 1 }
      elsif ($e != ENOENT && $e != ENOTDIR) { $errno = $e; last }
    }
    $errno ||= $denied ? EACCES : ENOENT;
  }
  syswrite($report, pack('N', $errno));
  quit(127);
}

sub start {
  my ($id, $request) = @_;
  my $file = $request->{file};
  my $plan = eval { prelude_plan($request->{prelude}) };
  return bad_request($id) if $@;
  my ($in_r, $in_w, $out_r, $out_w, $err_r, $err_w, $rep_r, $rep_w);
  if (($request->{stdin} && !pipe($in_r, $in_w)) || !pipe($out_r, $out_w) || !pipe($err_r, $err_w)
    || !pipe($rep_r, $rep_w)) {
    return spawn_error($id, $file, $! + 0);
  }
  # Exactly its environment (this process needs none of its own); PATH searched in it, as libuv does.
  my $env = $request->{env} || {};
  %ENV = %$env;
  my @paths = $file =~ m{/} ? ($file)
    : map { ($_ eq '' ? '.' : $_) . "/$file" } split(/:/, defined $env->{PATH} ? $env->{PATH} : '/usr/bin:/bin', -1);
  my @argv = ($file, @{ $request->{args} || [] });
  my @fds = (fileno($in_r || $devnull), fileno $out_w, fileno $err_w);
  my $pid = fork();
  return spawn_error($id, $file, $! + 0) unless defined $pid;
  become($request->{detached}, \@fds, $request->{cwd}, \@paths, \@argv, $rep_w, $plan) if $pid == 0;
  close $_ for grep { defined } $in_r, $out_w, $err_w, $rep_w;
  my ($n, $report);
  do { $n = sysread($rep_r, $report, 4) } while (!defined $n && $! == EINTR);
  close $rep_r;
  if ($n) {
    # It never ran: reaped here, nothing follows the ERROR.
    waitpid($pid, 0);
    close $_ for grep { defined } $in_w, $out_r, $err_r;
    return spawn_error($id, $file, unpack('N', $report));
  }
  # It leads its own session now (it has exec'd): lower it and its session's scheduling group.
  lower_priority($pid, $request->{nice}) if $request->{detached} && ($request->{nice} || 0) > 0;
  my $call = { pid => $pid, detached => $request->{detached}, out => $out_r, err => $err_r, queue => '' };
  if ($in_w) {
    nonblocking($in_w);
    $call->{in} = $in_w;
  }
  $calls{$id} = $call;
  $running{$pid} = $id;
  $outputs{ fileno $out_r } = [$id, OUT_DATA];
  $outputs{ fileno $err_r } = [$id, ERR_DATA];
  send_frame(SPAWNED, $id, pack('N', $pid));
}

# ---- A child's stdin, its outputs and its end.

sub close_stdin {
  my ($call) = @_;
  close $call->{in} if $call->{in};
  $call->{in} = undef;
  $call->{queue} = '';
}

sub flush_stdin {
  my ($call) = @_;
  while (length $call->{queue}) {
    my $n = syswrite($call->{in}, $call->{queue});
    if (!defined $n) {
      return if $! == EAGAIN || $! == EINTR;
      return close_stdin($call);    # it stopped reading (EPIPE): its exit code says what happened
    }
    substr($call->{queue}, 0, $n, '');
  }
  close_stdin($call) if $call->{ending};
}

sub bad_request {
  send_frame(ERROR, $_[0], '{"message":"process spawner: a bad request","code":"EINVAL","started":false}');
}

sub on_frame {
  my ($type, $id, $body) = @_;
  if ($type == SPAWN) {
    my $request = eval { json_value(\$body) };
    return start($id, $request) if ref $request eq 'HASH';
    return bad_request($id);
  }
  my $call = $calls{$id};
  return unless $call && $call->{in};
  if ($type == IN_DATA) { $call->{queue} .= $body }
  elsif ($type == IN_END) { $call->{ending} = 1 }
  flush_stdin($call);
}

sub maybe_close {
  my ($id) = @_;
  my $call = $calls{$id};
  return if !$call || $call->{out} || $call->{err} || !defined $call->{exit};
  close_stdin($call);
  delete $calls{$id};
  send_frame(CLOSE, $id, $call->{exit});
}

sub read_output {
  my ($fd) = @_;
  my ($id, $type) = @{ $outputs{$fd} };
  my $call = $calls{$id};
  my $key = $type == OUT_DATA ? 'out' : 'err';
  my $n = sysread($call->{$key}, my $chunk, CHUNK);
  return if !defined $n && ($! == EAGAIN || $! == EINTR);
  if ($n) { return send_frame($type, $id, $chunk) }
  delete $outputs{$fd};
  close $call->{$key};
  $call->{$key} = undef;
  maybe_close($id);
}

my %signal_names;

sub signal_name {
  my ($number) = @_;
  if (!%signal_names) {
    require Config;
    my @names = split ' ', $Config::Config{sig_name};
    my @numbers = split ' ', $Config::Config{sig_num};
    @signal_names{@numbers} = map {"SIG$_"} @names;
  }
  return $signal_names{$number} || "SIG$number";
}

sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) {    # WNOHANG
    my $id = delete $running{$pid};
    next unless defined $id;
    my $status = $?;
    my $body = $status & 127
      ? '{"code":null,"signal":"' . signal_name($status & 127) . '"}'
      : '{"code":' . ($status >> 8) . ',"signal":null}';
    $calls{$id}{exit} = $body;
    send_frame(EXIT, $id, $body);
    maybe_close($id);
  }
}

sub shutdown_all {
  for my $call (values %calls) {
    # Until it closed: a group whose leader exited may still hold the outputs open.
    kill('-KILL', $call->{pid}) if $call->{detached};
  }
  quit(0);
}

# ---- The loop.

send_frame(HELLO, 0, '{"prelude":' . ($PRLIMIT64 ? 'true' : 'false') . '}');

my $input = '';
while (1) {
  my ($rin, $win) = ('', '');
  vec($rin, 0, 1) = 1;
  vec($rin, fileno $wake_r, 1) = 1;
  vec($rin, $_, 1) = 1 for keys %outputs;
  for my $call (values %calls) { vec($win, fileno $call->{in}, 1) = 1 if $call->{in} && length $call->{queue} }
  my $ready = select(my $rout = $rin, my $wout = $win, undef, 1);
  shutdown_all() if getppid() != $parent;
  next if $ready <= 0;
  if (vec($rout, fileno $wake_r, 1)) {
    1 while sysread($wake_r, my $drained, 512);
    reap();
  }
  for my $fd (keys %outputs) { read_output($fd) if $outputs{$fd} && vec($rout, $fd, 1) }
  for my $call (values %calls) { flush_stdin($call) if $call->{in} && vec($wout, fileno $call->{in}, 1) }
  if (vec($rout, 0, 1)) {
    my $n = sysread(STDIN, $input, 262144, length $input);
    next if !defined $n && $! == EINTR;
    shutdown_all() unless $n;
    while (length($input) >= HEADER) {
      my ($length, $type, $id) = unpack('NCN', $input);
      last if length($input) < 4 + $length;
      my $body = substr($input, HEADER, $length + 4 - HEADER);
      substr($input, 0, 4 + $length, '');
      on_frame($type, $id, $body);
    }
  }
}
