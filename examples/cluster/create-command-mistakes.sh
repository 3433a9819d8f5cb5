# A create command with the request mistakes `pmanifest cluster check` knows (PM501-PM504): a Slurm
# cluster with preemptible GPUs, a target that is not a multiple of 8, no project, no standard node.
tg beta clusters create \
  --name hpc \
  --region us-central-2 \
  --gpu-type RTX_6000_PCI \
  --cluster-type SLURM \
  --billing-type ON_DEMAND \
  --num-preemptible-gpus 12 \
  --non-interactive --json
