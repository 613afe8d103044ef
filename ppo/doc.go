// Package ppo is kubesim's PPO trainer: it collects rollouts from env.VecEnv, computes GAE
// advantages, trains model's policy with the clipped surrogate loss, and keeps the best greedy
// evaluation on the validation episodes (agent.Evaluate) as best.ckpt. The trained policy at
// inference (loading, batching, the policy as a scheduler) is package agent.
//
// Logging and outputs of a run folder:
//   - monitor.csv: one row per finished episode (Monitor), in Stable-Baselines3's format:
//     a `#{"t_start": ..., "env_id": ...}` comment line, then `r,l,t` (episode reward, episode
//     length in env steps, wall-clock seconds since t_start).
//   - progress.csv: one row per update (Logger), columns sorted by name, named like SB3's
//     (`rollout/ep_rew_mean`, `train/approx_kl`, ...).
//   - events.out.tfevents.*: the same scalars as TensorBoard event files (TBWriter), tagged with
//     the same names and stepped by environment steps.
//   - a PNG learning curve (PlotLearningCurve).
//
// Every log file is append-only and only ever receives whole lines or whole records, so a run
// killed at any moment leaves readable files; files that are rewritten (progress.csv when a
// new key appears, the PNG) are replaced atomically.
package ppo
