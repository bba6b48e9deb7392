/**
 * Which box of a fleet runs a camera, and since which etcd revision (the ownership epoch: a later
 * owner's is greater, so a subscriber keeps the messages of the greatest epoch it has seen).
 */
export interface CameraOwner {
  box: string;
  epoch: number;
}

/** A camera's owner now; undefined without `fleet:`. */
export type OwnerOf = (camera: string) => CameraOwner | undefined;
