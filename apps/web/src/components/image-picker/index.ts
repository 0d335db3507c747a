export { ImagePicker } from './image-picker';
export { checkImageFile, uploadImage } from './upload-image';
