// Package agent is the trained policy at inference: loading a checkpoint
// (the policy and the environment configuration that encodes its
// observations), packing observations of clusters of any size into padded
// model batches, the policy as a sim.Scheduler that acts greedily exactly
// where a heuristic would, and greedy evaluation episodes.
//
// The trainer (ppo), the experiment runner (sweep) and a scheduler extender
// import it; evaluation does not go through the trainer.
package agent
